package netrule

import (
	"net"
	"net/netip"
)

// interfaceAddrs is net.InterfaceAddrs; tests replace it.
var interfaceAddrs = net.InterfaceAddrs

// IsHostAddr reports whether a is an address of one of this host's
// interfaces (of the network namespace the calling process is in), as
// they are at the time of the call: a service bound to every address
// (0.0.0.0, ::) answers on each of them as it does on loopback. The
// interfaces are read at each call (tens of microseconds), so an address
// added a moment ago counts. An IPv4-mapped address is judged by the IPv4
// address. When the interfaces cannot be read, every address is taken for
// the host's, with the error: refusing is the safe answer.
func IsHostAddr(a netip.Addr) (bool, error) {
	a = a.WithZone("").Unmap()
	list, err := interfaceAddrs()
	if err != nil {
		return true, err
	}
	for _, ia := range list {
		var ip net.IP
		switch v := ia.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if h, ok := netip.AddrFromSlice(ip); ok && h.Unmap() == a {
			return true, nil
		}
	}
	return false, nil
}
