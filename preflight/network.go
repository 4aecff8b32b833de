package preflight

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/corralhq/corral"
)

// resolveTimeout bounds each name's lookup.
const resolveTimeout = 5 * time.Second

// networkChecks resolves every exact name the allowlist of a NetworkAllow
// config names, each a check of its own ("network github.com"): a name that
// does not resolve here will not resolve for the sandbox's proxy either.
// Wildcard entries ("*.example.com") name no host to look up and are left
// out, as is every other network mode.
func networkChecks(ctx context.Context, c corral.Config, resolve func(context.Context, string) ([]netip.Addr, error)) []pathResult {
	if c.Network != corral.NetworkAllow {
		return nil
	}
	if resolve == nil {
		resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	var out []pathResult
	seen := map[string]bool{}
	for _, entry := range c.AllowedDomains {
		host := entry
		if h, _, err := net.SplitHostPort(entry); err == nil {
			host = h
		}
		if strings.HasPrefix(host, "*.") || seen[host] {
			continue
		}
		seen[host] = true
		ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err := resolve(ctx, host)
		cancel()
		if err == nil && len(addrs) == 0 {
			err = fmt.Errorf("no address")
		}
		if err != nil {
			err = fmt.Errorf("allowed domain %s does not resolve: %w", host, err)
		}
		out = append(out, pathResult{name: "network " + host, err: err})
	}
	return out
}
