package seccomp

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The connect program stops every connect and listen, refuses the sends
// that connect (MSG_FASTOPEN) and lets everything else through.
func TestConnectProgram(t *testing.T) {
	prog, err := ConnectProgram()
	if notifyArch == 0 {
		require.Error(t, err)
		t.Skip("no connect program on " + runtime.GOARCH)
	}
	require.NoError(t, err)
	arch := auditArch[runtime.GOARCH]
	const notify, allow = unix.SECCOMP_RET_USER_NOTIF, unix.SECCOMP_RET_ALLOW
	cases := []struct {
		name string
		nr   uint32
		args [6]uint64
		want uint32
	}{
		{"connect", unix.SYS_CONNECT, [6]uint64{}, notify},
		{"listen", unix.SYS_LISTEN, [6]uint64{}, notify},
		{"sendto", unix.SYS_SENDTO, [6]uint64{3: unix.MSG_NOSIGNAL}, allow},
		{"sendto fast open", unix.SYS_SENDTO, [6]uint64{3: unix.MSG_FASTOPEN | unix.MSG_NOSIGNAL}, fastOpenRefused},
		{"sendto fast open in the high word only", unix.SYS_SENDTO, [6]uint64{3: unix.MSG_FASTOPEN << 32}, allow},
		{"sendmsg", unix.SYS_SENDMSG, [6]uint64{2: unix.MSG_DONTWAIT}, allow},
		{"sendmsg fast open", unix.SYS_SENDMSG, [6]uint64{2: unix.MSG_FASTOPEN}, fastOpenRefused},
		{"sendmsg flag in another argument", unix.SYS_SENDMSG, [6]uint64{3: unix.MSG_FASTOPEN}, allow},
		{"sendmmsg fast open", unix.SYS_SENDMMSG, [6]uint64{3: unix.MSG_FASTOPEN}, fastOpenRefused},
		{"bind", unix.SYS_BIND, [6]uint64{}, allow},
		{"accept4", unix.SYS_ACCEPT4, [6]uint64{}, allow},
		{"write", unix.SYS_WRITE, [6]uint64{}, allow},
	}
	for _, c := range cases {
		got, err := simulate(prog, seccompData{nr: int32(c.nr), arch: arch, args: c.args})
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
	// Another architecture's calls are the policy filter's to kill.
	got, err := simulate(prog, seccompData{nr: unix.SYS_CONNECT, arch: auditArch["386"]})
	require.NoError(t, err)
	assert.Equal(t, uint32(allow), got)
}

// Then keeps the first program's refusals and stops and hands what it
// allows to the second.
func TestThen(t *testing.T) {
	first := []unix.SockFilter{
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, 1, 1, 2, 3),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
	}
	second := []unix.SockFilter{
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, 2, 1, 2, 3),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
	}
	prog, err := Then(first, second)
	require.NoError(t, err)
	for nr, want := range map[int32]uint32{
		1: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM),
		2: unix.SECCOMP_RET_USER_NOTIF,
		3: unix.SECCOMP_RET_ALLOW,
	} {
		got, err := simulate(prog, seccompData{nr: nr})
		require.NoError(t, err)
		assert.Equal(t, want, got, "call %d", nr)
	}
	_, err = Then(make([]unix.SockFilter, unix.BPF_MAXINSNS), second)
	assert.Error(t, err)
}
