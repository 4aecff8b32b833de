package testhook

import (
	"context"
	"net/netip"
)

// ResolveFunc looks a name up, as egress.Options.Resolve does.
type ResolveFunc func(ctx context.Context, host string) ([]netip.Addr, error)

var resolver ResolveFunc

// SetResolver makes the network proxy of sandboxes created afterwards
// resolve names with fn (a map of names to loopback addresses, so tests
// need no DNS and no internet) until restore is called.
func SetResolver(fn ResolveFunc) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	old := resolver
	resolver = fn
	return func() {
		mu.Lock()
		defer mu.Unlock()
		resolver = old
	}
}

// Resolver returns the resolver a test set, or nil.
func Resolver() ResolveFunc {
	mu.Lock()
	defer mu.Unlock()
	return resolver
}
