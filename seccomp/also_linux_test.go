package seccomp

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// What each notify program stops beyond the write calls: with Reads every
// open and the execs, with Execs the execs alone, with Binds bind, and
// ExecProgram the execs and nothing else.
func TestNotifyAlso(t *testing.T) {
	if notifyArch == 0 {
		t.Skip("no table of write calls for " + runtime.GOARCH)
	}
	const notify, allow = unix.SECCOMP_RET_USER_NOTIF, unix.SECCOMP_RET_ALLOW
	type call struct {
		name string
		nr   uint32
		args [6]uint64
	}
	var (
		readOpen  = call{"openat read", unix.SYS_OPENAT, [6]uint64{2: unix.O_RDONLY | unix.O_DIRECTORY}}
		writeOpen = call{"openat write", unix.SYS_OPENAT, [6]uint64{2: unix.O_WRONLY}}
		execve    = call{"execve", unix.SYS_EXECVE, [6]uint64{}}
		execveat  = call{"execveat", unix.SYS_EXECVEAT, [6]uint64{}}
		mkdirat   = call{"mkdirat", unix.SYS_MKDIRAT, [6]uint64{}}
		read      = call{"read", unix.SYS_READ, [6]uint64{}}
		newstat   = call{"newfstatat", unix.SYS_NEWFSTATAT, [6]uint64{}}
		bind      = call{"bind", unix.SYS_BIND, [6]uint64{}}
		createOp  = call{"openat create", unix.SYS_OPENAT, [6]uint64{2: unix.O_CREAT | unix.O_WRONLY}}
	)
	exec, err := ExecProgram()
	require.NoError(t, err)
	programs := []struct {
		name string
		prog func() ([]unix.SockFilter, error)
		want map[call]uint32
	}{
		{"writes", NotifyProgram, map[call]uint32{readOpen: allow, writeOpen: notify, execve: allow, execveat: allow, mkdirat: notify, read: allow, newstat: allow, bind: allow}},
		{"writes and binds", func() ([]unix.SockFilter, error) { return notifyProgram(Also{Binds: true}) },
			map[call]uint32{readOpen: allow, writeOpen: notify, execve: allow, mkdirat: notify, read: allow, bind: notify}},
		{"creates", func() ([]unix.SockFilter, error) { return CreateProgram(Also{}) },
			map[call]uint32{writeOpen: allow, createOp: notify, mkdirat: notify, bind: allow}},
		{"creates and binds", func() ([]unix.SockFilter, error) { return CreateProgram(Also{Binds: true}) },
			map[call]uint32{writeOpen: allow, createOp: notify, mkdirat: notify, execve: allow, bind: notify}},
		{"reads", func() ([]unix.SockFilter, error) { return notifyProgram(Also{Reads: true}) },
			map[call]uint32{readOpen: notify, writeOpen: notify, execve: notify, execveat: notify, mkdirat: notify, read: allow, newstat: allow}},
		{"execs", func() ([]unix.SockFilter, error) { return notifyProgram(Also{Execs: true}) },
			map[call]uint32{readOpen: allow, writeOpen: notify, execve: notify, execveat: notify, mkdirat: notify, read: allow, newstat: allow}},
		{"exec program", func() ([]unix.SockFilter, error) { return exec, nil },
			map[call]uint32{readOpen: allow, writeOpen: allow, execve: notify, execveat: notify, mkdirat: allow, read: allow, newstat: allow}},
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			prog, err := p.prog()
			require.NoError(t, err)
			for c, want := range p.want {
				got, err := simulate(prog, seccompData{nr: int32(c.nr), arch: notifyArch, args: c.args})
				require.NoError(t, err, c.name)
				assert.Equal(t, want, got, c.name)
			}
			// Another architecture's calls are the policy filter's to kill.
			got, err := simulate(prog, seccompData{nr: unix.SYS_EXECVE, arch: auditArch["386"]})
			require.NoError(t, err)
			assert.Equal(t, uint32(allow), got)
		})
	}
}

// Every read call names where its path is, and an open's flags where the
// listener tells a read from a write.
func TestReadCalls(t *testing.T) {
	calls := ReadCalls()
	if calls == nil {
		t.Skip("no table of write calls for " + runtime.GOARCH)
	}
	for _, nr := range []uint32{unix.SYS_OPENAT, unix.SYS_OPENAT2, unix.SYS_EXECVE, unix.SYS_EXECVEAT} {
		require.Contains(t, calls, nr)
	}
	assert.Equal(t, 2, calls[unix.SYS_OPENAT].FlagsArg)
	assert.Equal(t, 2, calls[unix.SYS_OPENAT2].HowArg)
	assert.Equal(t, PathArg{-1, 0}, calls[unix.SYS_EXECVE].Path)
	for nr, c := range calls {
		assert.False(t, c.FlagsArg >= 0 && c.HowArg >= 0, "call %d", nr)
		assert.True(t, IsExec(nr) == (c.FlagsArg < 0 && c.HowArg < 0), "call %d: only execs read without flags", nr)
	}
}

// A watch with Also keeps the policy's meaning: every call the policy
// allows reaches the notify part with Also, every refusal the listener.
func TestWatchProgramAlso(t *testing.T) {
	entries, err := prebuiltFS.ReadDir("prebuilt/" + runtime.GOARCH)
	if err != nil {
		t.Skip("no programs generated ahead for " + runtime.GOARCH)
	}
	also := Also{Reads: true, Execs: true}
	notify, err := notifyProgram(also)
	require.NoError(t, err)
	bpf, err := prebuiltFS.ReadFile("prebuilt/" + runtime.GOARCH + "/" + entries[0].Name())
	require.NoError(t, err)
	policy, err := decode(bpf)
	require.NoError(t, err)
	w, err := NewWatch(bpf)
	require.NoError(t, err)
	w.Also = also
	prog, err := w.Program()
	require.NoError(t, err)
	for nr := int32(0); nr < 1024; nr++ {
		for _, a := range plainProbes {
			d := seccompData{nr: nr, arch: auditArch[runtime.GOARCH], args: a}
			pol, err := simulate(policy, d)
			require.NoError(t, err)
			got, err := simulate(prog, d)
			require.NoError(t, err)
			switch action := pol & unix.SECCOMP_RET_ACTION_FULL; {
			case action == unix.SECCOMP_RET_ALLOW:
				not, err := simulate(notify, d)
				require.NoError(t, err)
				require.Equal(t, not, got, "call %d %v", nr, a)
			case action == unix.SECCOMP_RET_ERRNO && pol&unix.SECCOMP_RET_DATA != uint32(unix.ENOSYS):
				require.Equal(t, uint32(unix.SECCOMP_RET_USER_NOTIF), got, "call %d %v", nr, a)
			default:
				require.Equal(t, pol, got, "call %d %v", nr, a)
			}
		}
	}
}
