package nsjail

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

func sockaddrUnix(path string, extra int) []byte {
	b := make([]byte, 2+len(path)+extra)
	binary.NativeEndian.PutUint16(b, unix.AF_UNIX)
	copy(b[2:], path)
	return b
}

// Which addresses name a socket file, and which path: not an abstract
// name, not the bare family, not another family, nor a size the kernel
// refuses; the path ends at its first NUL or at the size.
func TestUnixPath(t *testing.T) {
	inet := sockaddrUnix("x", 0)
	binary.NativeEndian.PutUint16(inet, unix.AF_INET)
	cases := []struct {
		name string
		addr []byte
		path string
		ok   bool
	}{
		{"path with NUL", sockaddrUnix("a/b.sock", 1), "a/b.sock", true},
		{"path without NUL", sockaddrUnix("s", 0), "s", true},
		{"path then bytes", append(sockaddrUnix("s", 1), 'x', 'y'), "s", true},
		{"abstract", sockaddrUnix("\x00name", 0), "", false},
		{"family alone", sockaddrUnix("", 0), "", false},
		{"too short", []byte{1}, "", false},
		{"another family", inet, "", false},
		{"longer than sockaddr_un", sockaddrUnix("p", 110), "", false},
		{"108 bytes", sockaddrUnix(string(make108()), 0), string(make108()), true},
	}
	for _, c := range cases {
		p, ok := unixPath(c.addr)
		assert.Equal(t, c.ok, ok, c.name)
		assert.Equal(t, c.path, p, c.name)
	}
}

func make108() []byte {
	b := make([]byte, 108)
	for i := range b {
		b[i] = 'a'
	}
	return b
}

// Binds stop in the init unless Landlock grants no socket file already.
func TestStopsBinds(t *testing.T) {
	assert.True(t, stopsBinds(&setup{}), "no Landlock")
	assert.True(t, stopsBinds(&setup{Landlock: &Landlock{ABI: 6}}), "unix sockets allowed")
	assert.False(t, stopsBinds(&setup{Landlock: &Landlock{ABI: 6, NoSockets: true}}))
}
