package seccomp

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/hosttest"
)

// plainProbes are register values for calls no rule looks at the
// arguments of: none, and write flags for the notify program's opens.
var plainProbes = [][6]uint64{{}, {0: unix.O_WRONLY, 1: unix.O_WRONLY, 2: unix.O_WRONLY}}

// probes are register values that reach every branch of the policies for
// the calls whose arguments rules look at, by name: each value a rule
// matches on, alone and with its second.
func probes() map[string][][6]uint64 {
	out := map[string][][6]uint64{}
	for _, o := range allOptions() {
		for _, r := range Policy(o) {
			if r.Arg == nil {
				continue
			}
			if out[r.Syscall] == nil {
				out[r.Syscall] = slices.Clone(plainProbes)
			}
			var a [6]uint64
			if r.Arg != nil {
				a[r.Arg.Index] = r.Arg.Value
			}
			if r.And != nil {
				a[r.And.Index] = r.And.Value
			}
			if !slices.Contains(out[r.Syscall], a) {
				out[r.Syscall] = append(out[r.Syscall], a)
			}
		}
	}
	return out
}

// A watch's one program acts as the policy and the notify program stacked,
// but for the policy's refusals, which stop in the listener and get the
// policy's errno from Refuses: checked for every generated program, every
// call number and every argument the rules look at, and another
// architecture's calls.
func TestWatchProgram(t *testing.T) {
	entries, err := prebuiltFS.ReadDir("prebuilt/" + runtime.GOARCH)
	if err != nil {
		t.Skip("no programs generated ahead for " + runtime.GOARCH)
	}
	notify, err := NotifyProgram()
	require.NoError(t, err)
	byName := probes()
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			bpf, err := prebuiltFS.ReadFile("prebuilt/" + runtime.GOARCH + "/" + e.Name())
			require.NoError(t, err)
			policy, err := decode(bpf)
			require.NoError(t, err)
			w, err := NewWatch(bpf)
			require.NoError(t, err)
			prog, err := w.Program()
			require.NoError(t, err)
			refusals := 0
			for _, arch := range []uint32{auditArch[runtime.GOARCH], auditArch["386"]} {
				for nr := int32(0); nr < 1024; nr++ {
					args := plainProbes
					if name, ok := callNames[uint32(nr)]; ok && byName[name] != nil && arch == auditArch[runtime.GOARCH] {
						args = byName[name]
					}
					for _, a := range args {
						d := seccompData{nr: nr, arch: arch, args: a}
						pol, err := simulate(policy, d)
						require.NoError(t, err)
						not, err := simulate(notify, d)
						require.NoError(t, err)
						got, err := simulate(prog, d)
						require.NoError(t, err)
						errno, refused := w.Refuses(Notification{Nr: uint32(nr), Arch: arch, Args: a})
						action, data := pol&unix.SECCOMP_RET_ACTION_FULL, pol&unix.SECCOMP_RET_DATA
						switch {
						case action == unix.SECCOMP_RET_ALLOW:
							require.Equal(t, not, got, "call %d %v", nr, a)
							require.False(t, refused, "call %d %v", nr, a)
						case action == unix.SECCOMP_RET_ERRNO && data != uint32(unix.ENOSYS):
							refusals++
							require.Equal(t, uint32(unix.SECCOMP_RET_USER_NOTIF), got, "call %d %v", nr, a)
							require.True(t, refused, "call %d %v", nr, a)
							require.Equal(t, syscall.Errno(data), errno, "call %d %v", nr, a)
						default: // a kill, or ENOSYS: the filter's own
							require.Equal(t, pol, got, "call %d %v", nr, a)
						}
					}
				}
			}
			assert.Positive(t, refusals)
		})
	}
}

// Every call the policy refuses has a name.
func TestCallNames(t *testing.T) {
	if _, err := prebuiltFS.ReadDir("prebuilt/" + runtime.GOARCH); err != nil {
		t.Skip("no programs generated ahead for " + runtime.GOARCH)
	}
	for _, o := range allOptions() {
		for _, r := range Policy(o) {
			assert.True(t, slices.ContainsFunc(slices.Collect(mapValues(callNames)), func(n string) bool { return n == r.Syscall }), r.Syscall)
		}
	}
	assert.Equal(t, "mount", CallName(unix.SYS_MOUNT))
	assert.Equal(t, "syscall 100000", CallName(100000))
}

func mapValues(m map[uint32]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

func TestWhy(t *testing.T) {
	assert.Contains(t, Why("mount", unix.EPERM), "attaches filesystems")
	assert.Empty(t, Why("socket", unix.EPERM), "two rules, two reasons")
	assert.Contains(t, Why("socket", unix.EAFNOSUPPORT), "socket family")
	assert.Empty(t, Why("read", unix.EPERM))
}

// keyringID asks for the user keyring's id: allowed everywhere but under
// the policy, which refuses keyctl with EPERM.
func keyringID() string {
	_, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_USER_KEYRING, 0, 0, 0)
	return errnoName(err)
}

func TestWatchChild(t *testing.T) {
	if os.Getenv(childEnv) != "watch" {
		t.Skip("runs only as the child of TestWatch")
	}
	runtime.LockOSThread()
	res := map[string]string{"control keyctl": keyringID()}
	bpf, err := Filter(Options{})
	require.NoError(t, err)
	w, err := NewWatch(bpf)
	require.NoError(t, err)
	prog, err := w.Program()
	require.NoError(t, err)
	require.NoError(t, unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	fd, err := LoadListener(prog)
	require.NoError(t, err)
	// A listener that answers calls as the init's does, and stops after
	// keyctl's.
	seen := make(chan string, 1)
	go func() {
		var names []string
		for !slices.Contains(names, "keyctl") {
			n, err := Receive(fd)
			if err != nil {
				names = append(names, err.Error())
				break
			}
			if errno, ok := w.Refuses(n); ok {
				Fail(fd, n.ID, errno)
			} else {
				Continue(fd, n.ID)
			}
			names = append(names, CallName(n.Nr))
		}
		seen <- strings.Join(names, ",")
	}()
	// clone3 is refused by the filter itself: it never reaches the
	// listener, whose one call is keyctl's.
	_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
	res["clone3"] = rawErr(e)
	res["keyctl"] = keyringID()
	res["seen"] = <-seen
	// With the listener gone, what the policy refuses stays refused.
	unix.Close(fd)
	res["keyctl without listener"] = keyringID()
	_, err = unix.Open(os.DevNull, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	res["write without listener"] = errnoName(err)
	require.NoError(t, json.NewEncoder(os.Stdout).Encode(res))
}

// A watch refuses what the policy refuses, with its errno, through the
// listener, and still refuses it (ENOSYS) once the listener is gone. The
// probe works before the filter is loaded.
func TestWatch(t *testing.T) {
	if ok, why := Available(); !ok {
		hosttest.Skip(t, "no seccomp filters here: "+why)
	}
	if err := ListenerSupport(); err != nil {
		hosttest.Skip(t, err.Error())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchChild$")
	cmd.Env = append(os.Environ(), childEnv+"=watch")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var res map[string]string
	require.NoError(t, json.NewDecoder(strings.NewReader(string(out))).Decode(&res), "%s", out)
	assert.Equal(t, map[string]string{
		"control keyctl":          "ok",
		"clone3":                  "ENOSYS",
		"keyctl":                  "EPERM",
		"seen":                    "keyctl",
		"keyctl without listener": "ENOSYS",
		"write without listener":  "ENOSYS",
	}, res)
}
