package nsjail

import (
	"encoding/binary"
	"net/netip"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

func sockaddr(family uint16, size int, port uint16, addr []byte) []byte {
	b := make([]byte, size)
	if size >= 2 {
		binary.NativeEndian.PutUint16(b, family)
	}
	if size >= 4 {
		binary.BigEndian.PutUint16(b[2:], port)
	}
	at := 4
	if family == unix.AF_INET6 {
		at = 8
	}
	copy(b[min(at, size):], addr)
	return b
}

// The address a connect names is read as the kernel reads it, and what
// the kernel refuses gets its errno.
func TestParseSockaddr(t *testing.T) {
	lo4 := []byte{127, 0, 0, 1}
	mapped := netip.MustParseAddr("::ffff:127.0.0.1").AsSlice()
	for _, c := range []struct {
		name   string
		buf    []byte
		family int
		want   string
		errno  syscall.Errno
	}{
		{"IPv4", sockaddr(unix.AF_INET, 16, 8080, lo4), unix.AF_INET, "127.0.0.1:8080", 0},
		{"IPv4, longer", sockaddr(unix.AF_INET, 128, 8080, lo4), unix.AF_INET, "127.0.0.1:8080", 0},
		{"IPv4, short", sockaddr(unix.AF_INET, 8, 8080, lo4), unix.AF_INET, "", unix.EINVAL},
		{"IPv6 on an IPv4 socket", sockaddr(unix.AF_INET6, 28, 8080, mapped), unix.AF_INET, "", unix.EAFNOSUPPORT},
		{"IPv6, mapped", sockaddr(unix.AF_INET6, 28, 443, mapped), unix.AF_INET6, "[::ffff:127.0.0.1]:443", 0},
		{"IPv6, without scope", sockaddr(unix.AF_INET6, 24, 443, mapped), unix.AF_INET6, "[::ffff:127.0.0.1]:443", 0},
		{"IPv4 on an IPv6 socket, short", sockaddr(unix.AF_INET, 16, 443, lo4), unix.AF_INET6, "", unix.EINVAL},
		{"IPv4 on an IPv6 socket", sockaddr(unix.AF_INET, 28, 443, lo4), unix.AF_INET6, "", unix.EAFNOSUPPORT},
		{"unspecified", sockaddr(unix.AF_UNSPEC, 16, 0, nil), unix.AF_INET, "invalid AddrPort", 0},
		{"family only", sockaddr(unix.AF_INET, 2, 0, nil), unix.AF_INET, "", unix.EINVAL},
		{"nothing", nil, unix.AF_INET, "", unix.EINVAL},
	} {
		got, errno := parseSockaddr(c.buf, c.family)
		assert.Equal(t, c.errno, errno, c.name)
		if errno == 0 {
			assert.Equal(t, c.want, got.String(), c.name)
		}
	}
}
