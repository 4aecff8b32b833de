package seccomp

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestShieldNumbers checks the call numbers the shield is built with
// against the system's own for the architecture the tests run on.
func TestShieldNumbers(t *testing.T) {
	arch, ok := shieldArch[runtime.GOARCH]
	if !ok {
		t.Skipf("no shield for %s", runtime.GOARCH)
	}
	want := map[string]uint32{
		"kill": unix.SYS_KILL, "tkill": unix.SYS_TKILL, "tgkill": unix.SYS_TGKILL,
		"rt_sigqueueinfo": unix.SYS_RT_SIGQUEUEINFO, "rt_tgsigqueueinfo": unix.SYS_RT_TGSIGQUEUEINFO,
		"pidfd_open": unix.SYS_PIDFD_OPEN, "prlimit64": unix.SYS_PRLIMIT64, "setpriority": unix.SYS_SETPRIORITY,
		"ioprio_set": unix.SYS_IOPRIO_SET, "sched_setaffinity": unix.SYS_SCHED_SETAFFINITY,
		"sched_setscheduler": unix.SYS_SCHED_SETSCHEDULER, "sched_setparam": unix.SYS_SCHED_SETPARAM,
		"sched_setattr": unix.SYS_SCHED_SETATTR,
	}
	assert.Equal(t, want, arch.calls)
	assert.Equal(t, auditArch[runtime.GOARCH], arch.audit)
}

// TestShieldProgram runs the shield on calls it must refuse and calls it
// must let through, for every architecture it is built for.
func TestShieldProgram(t *testing.T) {
	const initPid, thread = 4242, 4250
	neg := func(v int) uint64 { return uint64(uint32(int32(-v))) }
	cases := []struct {
		name string
		host bool
		call string
		args [6]uint64
		want uint32
	}{
		{"kill the init", false, "kill", [6]uint64{initPid, 9}, retErrno | 1},
		{"kill the init's group", false, "kill", [6]uint64{neg(initPid), 9}, retErrno | 1},
		{"kill the init, high bits set", false, "kill", [6]uint64{1<<32 | initPid, 9}, retErrno | 1},
		{"kill another", false, "kill", [6]uint64{77, 9}, retAllow},
		{"kill everything", false, "kill", [6]uint64{neg(1), 9}, retAllow},
		{"tkill the init's thread", false, "tkill", [6]uint64{thread, 9}, retErrno | 1},
		{"tkill own thread", false, "tkill", [6]uint64{78, 6}, retAllow},
		{"tgkill the init", false, "tgkill", [6]uint64{initPid, thread, 9}, retErrno | 1},
		{"tgkill the init's thread in another group", false, "tgkill", [6]uint64{1, thread, 9}, retErrno | 1},
		{"tgkill own", false, "tgkill", [6]uint64{77, 78, 6}, retAllow},
		{"sigqueue the init", false, "rt_sigqueueinfo", [6]uint64{initPid, 10}, retErrno | 1},
		{"tgsigqueue the init's thread", false, "rt_tgsigqueueinfo", [6]uint64{initPid, thread, 10}, retErrno | 1},
		{"pidfd of the init's thread", false, "pidfd_open", [6]uint64{thread, 0}, retErrno | 1},
		{"pidfd of another", false, "pidfd_open", [6]uint64{77, 0}, retAllow},
		{"set another's limits", false, "prlimit64", [6]uint64{77, 7, 0x7ffd_0000_1000}, retErrno | 1},
		{"set another's limits, pointer in high word", false, "prlimit64", [6]uint64{77, 7, 0x7ffd_0000_0000}, retErrno | 1},
		{"read another's limits", false, "prlimit64", [6]uint64{77, 7, 0, 0x7ffd_0000_1000}, retAllow},
		{"set own limits", false, "prlimit64", [6]uint64{0, 7, 0x7ffd_0000_1000}, retAllow},
		{"renice another, shared processes", false, "setpriority", [6]uint64{0, 77, 19}, retAllow},
		{"renice another", true, "setpriority", [6]uint64{0, 77, 19}, retErrno | 1},
		{"renice the user", true, "setpriority", [6]uint64{2, 0, 19}, retErrno | 1},
		{"renice self", true, "setpriority", [6]uint64{0, 0, 19}, retAllow},
		{"io priority of another", true, "ioprio_set", [6]uint64{1, 77, 0}, retErrno | 1},
		{"io priority of self", true, "ioprio_set", [6]uint64{1, 0, 0}, retAllow},
		{"pin another", true, "sched_setaffinity", [6]uint64{77, 8, 0x1000}, retErrno | 1},
		{"pin self", true, "sched_setaffinity", [6]uint64{0, 8, 0x1000}, retAllow},
		{"starve another", true, "sched_setscheduler", [6]uint64{77, 5, 0x1000}, retErrno | 1},
		{"sched_setattr another", true, "sched_setattr", [6]uint64{77, 0x1000, 0}, retErrno | 1},
	}
	for goarch, arch := range shieldArch {
		for _, c := range cases {
			t.Run(goarch+"/"+c.name, func(t *testing.T) {
				prog, err := Shield{IDs: []int{initPid, thread}, Host: c.host}.program(goarch)
				require.NoError(t, err)
				got, err := simulate(prog, seccompData{nr: int32(arch.calls[c.call]), arch: arch.audit, args: c.args})
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("%#x", c.want), fmt.Sprintf("%#x", got))
			})
		}
		t.Run(goarch+"/other calls", func(t *testing.T) {
			prog, err := Shield{IDs: []int{initPid}, Host: true}.program(goarch)
			require.NoError(t, err)
			got, err := simulate(prog, seccompData{nr: 0, arch: arch.audit, args: [6]uint64{initPid}})
			require.NoError(t, err)
			assert.Equal(t, uint32(retAllow), got)
			got, err = simulate(prog, seccompData{nr: int32(arch.calls["kill"]), arch: auditArch["386"], args: [6]uint64{initPid}})
			require.NoError(t, err)
			assert.Equal(t, uint32(retKillProcess), got, "another architecture's entry point")
		})
	}
	prog, err := Shield{}.program("amd64")
	require.NoError(t, err)
	got, err := simulate(prog, seccompData{nr: x32Bit | 62, arch: auditArch["amd64"]})
	require.NoError(t, err)
	assert.Equal(t, uint32(retKillProcess), got, "an x32 call")
	_, err = Shield{}.program("mips")
	require.Error(t, err)
}
