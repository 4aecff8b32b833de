//go:build linux && cgo && libseccomp

package seccomp

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The notify program stops exactly the write calls, opens only with a
// write flag, and lets everything else (plain reads above all) through.
func TestNotifyProgram(t *testing.T) {
	prog, err := NotifyProgram()
	require.NoError(t, err)
	arch := auditArch[runtime.GOARCH]
	const notify = unix.SECCOMP_RET_USER_NOTIF
	const allow = unix.SECCOMP_RET_ALLOW
	cases := []struct {
		name string
		nr   uint32
		args [6]uint64
		want uint32
	}{
		{"openat read", unix.SYS_OPENAT, [6]uint64{2: unix.O_RDONLY | unix.O_CLOEXEC}, allow},
		{"openat directory", unix.SYS_OPENAT, [6]uint64{2: unix.O_RDONLY | unix.O_DIRECTORY}, allow},
		{"openat write", unix.SYS_OPENAT, [6]uint64{2: unix.O_WRONLY}, notify},
		{"openat rdwr", unix.SYS_OPENAT, [6]uint64{2: unix.O_RDWR}, notify},
		{"openat create", unix.SYS_OPENAT, [6]uint64{2: unix.O_CREAT}, notify},
		{"openat truncate", unix.SYS_OPENAT, [6]uint64{2: unix.O_TRUNC}, notify},
		{"openat high bits only", unix.SYS_OPENAT, [6]uint64{2: 1 << 40}, allow},
		{"openat2", unix.SYS_OPENAT2, [6]uint64{}, notify},
		{"mkdirat", unix.SYS_MKDIRAT, [6]uint64{}, notify},
		{"unlinkat", unix.SYS_UNLINKAT, [6]uint64{}, notify},
		{"renameat2", unix.SYS_RENAMEAT2, [6]uint64{}, notify},
		{"symlinkat", unix.SYS_SYMLINKAT, [6]uint64{}, notify},
		{"linkat", unix.SYS_LINKAT, [6]uint64{}, notify},
		{"fchmodat", unix.SYS_FCHMODAT, [6]uint64{}, notify},
		{"truncate", unix.SYS_TRUNCATE, [6]uint64{}, notify},
		{"read", unix.SYS_READ, [6]uint64{}, allow},
		{"write", unix.SYS_WRITE, [6]uint64{}, allow},
		{"ftruncate", unix.SYS_FTRUNCATE, [6]uint64{}, allow},
	}
	for _, c := range cases {
		got, err := simulate(prog, seccompData{nr: int32(c.nr), arch: arch, args: c.args})
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
	for nr := range WriteCalls() {
		got, err := simulate(prog, seccompData{nr: int32(nr), arch: arch, args: [6]uint64{1: unix.O_WRONLY, 2: unix.O_WRONLY}})
		require.NoError(t, err)
		assert.Equal(t, uint32(notify), got, "call %d", nr)
	}
	// Another architecture's calls are the policy filter's to kill.
	got, err := simulate(prog, seccompData{nr: unix.SYS_OPENAT, arch: auditArch["386"], args: [6]uint64{2: unix.O_WRONLY}})
	require.NoError(t, err)
	assert.Equal(t, uint32(allow), got)
}
