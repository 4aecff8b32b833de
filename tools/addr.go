package tools

import (
	"net/netip"

	"github.com/corralhq/corral/internal/netrule"
)

// BlockedAddr reports whether a browsing tool must refuse to connect to a,
// and why ("loopback", "private", "a cloud metadata endpoint", ...).
func BlockedAddr(a netip.Addr) (string, bool) { return netrule.BlockedAddr(a) }
