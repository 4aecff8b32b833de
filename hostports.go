package corral

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Host ports (Config.HostPorts) and published ports (Config.Publish): the
// two narrow ways between a sandbox's private loopback and the host's.

// ParseHostPort reads a host port as the CLI's --allow-host-port and a
// config file's host_ports give it: "PORT" or "PORT/tcp". UDP is refused
// with the reason: host ports carry TCP only.
func ParseHostPort(s string) (int, error) {
	num, proto, hasProto := strings.Cut(s, "/")
	if hasProto && !strings.EqualFold(proto, "tcp") {
		if strings.EqualFold(proto, "udp") {
			return 0, errors.New("UDP is not forwarded: host ports carry TCP only")
		}
		return 0, fmt.Errorf("protocol %q: want tcp", proto)
	}
	return parsePort(num)
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, errors.New("want a port from 1 to 65535")
	}
	return n, nil
}

// published is one entry of Config.Publish: the command's server on port
// of the sandbox's loopback, reached from host on the host.
type published struct {
	host netip.AddrPort
	port uint16
}

// url is what a browser on the host opens.
func (p published) url() string { return "http://" + p.host.String() }

// ParsePublish checks an entry of Config.Publish,
// "[HOSTADDR:]HOSTPORT[:PORT]", and returns the host's address and port
// and the port inside. HOSTADDR is an IP address, an IPv6 one in
// brackets; 127.0.0.1 when left out. PORT is HOSTPORT when left out.
func ParsePublish(s string) (host netip.AddrPort, port int, err error) {
	p, err := parsePublish(s)
	return p.host, int(p.port), err
}

func parsePublish(s string) (published, error) {
	addr := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	rest := s
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 {
			return published{}, errors.New("want [HOSTADDR:]HOSTPORT[:PORT], an IPv6 address in brackets")
		}
		a, err := netip.ParseAddr(s[1:end])
		if err != nil || !a.Is6() {
			return published{}, fmt.Errorf("host address %q: want an IP address", s[1:end])
		}
		addr, rest = a, s[end+2:]
	} else if parts := strings.Split(s, ":"); len(parts) == 3 || len(parts) == 2 && strings.Contains(parts[0], ".") {
		a, err := netip.ParseAddr(parts[0])
		if err != nil || !a.Is4() {
			return published{}, fmt.Errorf("host address %q: want an IP address", parts[0])
		}
		addr, rest = a, strings.Join(parts[1:], ":")
	}
	hostPort, inner, hasInner := strings.Cut(rest, ":")
	hp, err := parsePort(hostPort)
	if err != nil {
		return published{}, fmt.Errorf("host port %q: %v", hostPort, err)
	}
	port := hp
	if hasInner {
		if port, err = parsePort(inner); err != nil {
			return published{}, fmt.Errorf("port %q: %v", inner, err)
		}
	}
	return published{host: netip.AddrPortFrom(addr, uint16(hp)), port: uint16(port)}, nil
}

// resolveHostNet checks HostPorts and Publish: both need a network of the
// sandbox's own (NetworkNone or NetworkAllow), whose loopback is not the
// host's.
func (s *spec) resolveHostNet(c Config) error {
	if len(c.HostPorts) == 0 && len(c.Publish) == 0 {
		return nil
	}
	field, value := "HostPorts", ""
	if len(c.HostPorts) > 0 {
		value = strconv.Itoa(c.HostPorts[0])
	} else {
		field, value = "Publish", c.Publish[0]
	}
	switch {
	case s.Mode == ModeDisabled:
		return &ConfigError{Field: field, Value: value, Reason: "needs the sandbox, which Mode disables"}
	case s.Network != NetworkNone && s.Network != NetworkAllow:
		return &ConfigError{Field: field, Value: value, Reason: fmt.Sprintf(
			"needs Network %q or %q: with %q the host's loopback is the command's own", NetworkNone, NetworkAllow, NetworkHost)}
	}
	for _, p := range c.HostPorts {
		if p < 1 || p > 65535 {
			return &ConfigError{Field: "HostPorts", Value: strconv.Itoa(p), Reason: "want a port from 1 to 65535"}
		}
		if !slices.Contains(s.HostPorts, uint16(p)) {
			s.HostPorts = append(s.HostPorts, uint16(p))
		}
	}
	for _, e := range c.Publish {
		p, err := parsePublish(e)
		if err != nil {
			return &ConfigError{Field: "Publish", Value: e, Reason: err.Error()}
		}
		if !p.host.Addr().IsLoopback() && !c.PublishAny {
			return &ConfigError{Field: "Publish", Value: e, Reason: fmt.Sprintf(
				"host address %s is not loopback: other machines could reach the command's server; PublishAny (--publish-any) allows it", p.host.Addr())}
		}
		if slices.ContainsFunc(s.Publish, func(q published) bool { return q.host == p.host }) {
			return &ConfigError{Field: "Publish", Value: e, Reason: fmt.Sprintf("host address %s is published twice", p.host)}
		}
		if slices.Contains(s.HostPorts, p.port) {
			return &ConfigError{Field: "Publish", Value: e, Reason: fmt.Sprintf("port %d inside is a host port (HostPorts)", p.port)}
		}
		s.Publish = append(s.Publish, p)
	}
	return nil
}

// hostNet tells whether s has host ports or published ports.
func (s *spec) hostNet() bool { return len(s.HostPorts) > 0 || len(s.Publish) > 0 }

// hostNetRefusal refuses host and published ports on a rung that cannot
// give them: publishing needs the full rung's network namespace, host
// ports that or the landlock rung's connect broker.
func (s *spec) hostNetRefusal(rung Rung, brokered bool) error {
	switch {
	case rung == RungNone:
		return nil // unsandboxed, on the host's network, as the config allowed
	case len(s.Publish) > 0 && rung != RungFull:
		return &SetupError{Layer: LayerNetNS, Err: fmt.Errorf(
			"publishing a port needs a network namespace of the sandbox's own, which rung %s does not have", rung)}
	case len(s.HostPorts) > 0 && rung != RungFull && (rung != RungLandlock || !brokered):
		return &SetupError{Layer: LayerSeccomp, Err: fmt.Errorf(
			"host ports need a network namespace of the sandbox's own, or on rung landlock a seccomp listener to make the command's connections; rung %s has neither", rung)}
	}
	return nil
}

// RuleHostPort: a connection to a port of the host's loopback that
// HostPorts does not name.
const RuleHostPort = "a port of the host's loopback that is not a host port"

// loopbackPort is the port of target ("127.0.0.1:80", "[::1]:80",
// "localhost:80") when it is an address a host port is reached at.
func loopbackPort(target string) (string, bool) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return "", false
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return port, true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !isHostPortAddr(a) {
		return "", false
	}
	return port, true
}

// hostPortTarget tells whether a refused connection's target is a port
// of the host's loopback, which --allow-host-port would open.
func hostPortTarget(target string) bool {
	_, ok := loopbackPort(target)
	return ok
}

// isHostPortAddr tells whether a is an address a host port is reached at
// inside: 127.0.0.1 or ::1, not the rest of 127.0.0.0/8.
func isHostPortAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || a == netip.IPv6Loopback()
}
