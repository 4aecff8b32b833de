//go:build amd64 || arm64

package seccomp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The shared memory filter fails what makes shared anonymous memory and
// lets every other call through, mmap's other forms included.
func TestSharedMemoryProgram(t *testing.T) {
	prog, err := SharedMemoryProgram()
	require.NoError(t, err)
	const refused, allow = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOMEM), unix.SECCOMP_RET_ALLOW
	mmap := func(flags uint64) [6]uint64 { return [6]uint64{1: 1 << 30, 3: flags, 4: ^uint64(0)} }
	for _, c := range []struct {
		name string
		nr   int32
		arch uint32
		args [6]uint64
		want uint32
	}{
		{"memfd_create", unix.SYS_MEMFD_CREATE, notifyArch, [6]uint64{}, refused},
		{"shmget", unix.SYS_SHMGET, notifyArch, [6]uint64{}, refused},
		{"mmap shared anonymous", unix.SYS_MMAP, notifyArch, mmap(unix.MAP_SHARED | unix.MAP_ANONYMOUS), refused},
		{"mmap shared_validate anonymous", unix.SYS_MMAP, notifyArch, mmap(unix.MAP_SHARED_VALIDATE | unix.MAP_ANONYMOUS), refused},
		{"mmap private anonymous", unix.SYS_MMAP, notifyArch, mmap(unix.MAP_PRIVATE | unix.MAP_ANONYMOUS), allow},
		{"mmap shared file", unix.SYS_MMAP, notifyArch, mmap(unix.MAP_SHARED), allow},
		{"mmap private file", unix.SYS_MMAP, notifyArch, mmap(unix.MAP_PRIVATE), allow},
		{"read", unix.SYS_READ, notifyArch, [6]uint64{}, allow},
		{"another architecture", unix.SYS_MEMFD_CREATE, notifyArch + 1, [6]uint64{}, allow},
	} {
		got, err := simulate(prog, seccompData{nr: c.nr, arch: c.arch, args: c.args})
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
}
