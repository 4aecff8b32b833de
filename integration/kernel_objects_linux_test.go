package integration

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
)

// TestLayersStdioRights hands the command a file outside every granted tree
// as its stdin, opened for reading: reopening it for writing through
// /proc/self/fd/0 must fail, even when the file was deleted meanwhile.
func TestLayersStdioRights(t *testing.T) {
	s := newLayScene(t)
	profile := filepath.Join(s.outside, ".profile")
	require.NoError(t, os.WriteFile(profile, []byte("PATH=/usr/bin\n"), 0o644))
	open := func(t *testing.T) *os.File {
		f, err := os.Open(profile)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	require.Equal(t, "ok", s.outsideRun(t, open(t), "reopen", "/proc/self/fd/0").get("open"),
		"without the sandbox, a read-only stdin reopens for appending")
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, open(t), "reopen", "/proc/self/fd/0")
			assert.NotEqual(t, "ok", r.get("open"), "stdin opened for reading became writable")
			r = s.inside(t, sb, open(t), "read", "/proc/self/fd/0")
			assert.Equal(t, "ok", r.get("read"), "reading it again is what the descriptor allows")

			tmp := filepath.Join(s.outside, "gone")
			require.NoError(t, os.WriteFile(tmp, []byte("x"), 0o644))
			gone, err := os.Open(tmp)
			require.NoError(t, err)
			defer gone.Close()
			require.NoError(t, os.Remove(tmp))
			r = s.inside(t, sb, gone, "read", "/proc/self/fd/0")
			assert.Equal(t, "ok", r.get("read"), "a deleted stdin is granted by its descriptor: %s", r.out)
		})
	}
	b, err := os.ReadFile(profile)
	require.NoError(t, err)
	assert.Equal(t, "PATH=/usr/bin\n", string(b))
}

// TestLayersStdioAppendRights hands the command a log opened for appending:
// it may reopen it to append, not to truncate it.
func TestLayersStdioAppendRights(t *testing.T) {
	s := newLayScene(t)
	log := filepath.Join(s.outside, "build.log")
	appending := func(t *testing.T) *os.File {
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	require.Equal(t, "ok", s.outsideRun(t, appending(t), "write", "/proc/self/fd/0").get("open"),
		"without the sandbox, an append-mode stdin reopens truncating")
	require.NoError(t, os.WriteFile(log, []byte("line 1\n"), 0o644))
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, appending(t), "write", "/proc/self/fd/0")
			assert.NotEqual(t, "ok", r.get("open"), "truncating a log handed for appending")
			r = s.inside(t, sb, appending(t), "reopen", "/proc/self/fd/0")
			assert.Equal(t, "ok", r.get("open"), "appending is what the descriptor allows")
		})
	}
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "line 1\n", string(b))
}

// TestLayersKernelObjects looks for the host's System V IPC objects and its
// cgroup from inside the full rung.
func TestLayersKernelObjects(t *testing.T) {
	s := newLayScene(t)
	key := strconv.Itoa(0x5c0000 + os.Getpid()%0x10000)
	made := s.outsideRun(t, nil, "ipcmake", key)
	require.Equal(t, "ok", made.get("shm"))
	require.Equal(t, "ok", made.get("msg"))
	t.Cleanup(func() { s.outsideRun(t, nil, "ipcremove", key) })
	control := s.outsideRun(t, nil, "ipc", key)
	require.Equal(t, "ok", control.get("shm"), "without the sandbox the host's segment is found")
	require.Equal(t, "ok", control.get("msg"), "without the sandbox the host's queue is found")
	t.Logf("cgroup without the sandbox: %s", s.outsideRun(t, nil, "cgroup").get("cgroup"))
	for _, net := range []corral.Network{corral.NetworkHost, corral.NetworkNone} {
		t.Run(string(net), func(t *testing.T) {
			cfg := s.config()
			cfg.Network = net
			sb, _ := s.sandbox(t, corral.RungFull, cfg)
			r := s.inside(t, sb, nil, "ipc", key)
			assert.Equal(t, "ENOENT", r.get("shm"))
			assert.Equal(t, "ENOENT", r.get("msg"))
			assert.Equal(t, "/", s.inside(t, sb, nil, "cgroup").get("cgroup"), "the host's cgroup path stays outside")
			// The cgroup path alone proves little on a host whose own path
			// is "/": the namespaces themselves must be other than ours.
			out, err := sb.Command(t.Context(), "readlink", "/proc/self/ns/ipc", "/proc/self/ns/uts", "/proc/self/ns/cgroup").Output()
			require.NoError(t, err)
			inside := strings.Fields(string(out))
			require.Len(t, inside, 3)
			// Control: the same probe run without the sandbox finds ours.
			out, err = exec.Command("readlink", "/proc/self/ns/ipc", "/proc/self/ns/uts", "/proc/self/ns/cgroup").Output()
			require.NoError(t, err)
			outside := strings.Fields(string(out))
			for i, ns := range []string{"ipc", "uts", "cgroup"} {
				require.Equal(t, mustReadlink(t, "/proc/self/ns/"+ns), outside[i], "control: without the sandbox the %s namespace is ours", ns)
				assert.NotEqual(t, outside[i], inside[i], "the %s namespace is the sandbox's own", ns)
			}
		})
	}
}

func mustReadlink(t *testing.T, p string) string {
	t.Helper()
	l, err := os.Readlink(p)
	require.NoError(t, err)
	return l
}

func TestLayersSocketFamilies(t *testing.T) {
	s := newLayScene(t)
	control := s.outsideRun(t, nil, "families")
	require.Equal(t, "ok", control.get("netlink_route"))
	require.Equal(t, "ok", control.get("netlink_uevent"), "device events of the host")
	require.Equal(t, "ok", control.get("netlink_generic"))
	require.Equal(t, "ok", control.get("unixpair"))
	if control.get("vsock") != "ok" {
		t.Skipf("kernel without AF_VSOCK (%s): nothing to refuse", control.get("vsock"))
	}
	for _, rung := range layRungs {
		for _, net := range []corral.Network{corral.NetworkHost, corral.NetworkNone} {
			t.Run(string(rung)+"/"+string(net), func(t *testing.T) {
				cfg := s.config()
				cfg.Network = net
				sb, _ := s.sandbox(t, rung, cfg)
				r := s.inside(t, sb, nil, "families")
				assert.Equal(t, "EAFNOSUPPORT", r.get("vsock"))
				assert.Equal(t, "ok", r.get("netlink_route"), "libc asks route netlink for addresses")
				assert.Equal(t, "EPROTONOSUPPORT", r.get("netlink_uevent"))
				assert.Equal(t, "EPROTONOSUPPORT", r.get("netlink_generic"))
				assert.Equal(t, "ok", r.get("unixpair"))
			})
		}
	}
}

// TestLayersLandlockRungDevices opens a terminal of another session, which
// the landlock rung sees in the host's /dev.
func TestLayersLandlockRungDevices(t *testing.T) {
	s := newLayScene(t)
	_, slave := layPty(t)
	other := slave.Name()
	require.Equal(t, "ok", s.outsideRun(t, nil, "open", other).get("open"), "without the sandbox another terminal opens")
	require.Equal(t, "ok", s.outsideRun(t, nil, "open", "/dev/shm").get("open"))
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, nil, "open", other)
			assert.Contains(t, []string{"EACCES", "ENOENT"}, r.get("open"), "another session's terminal")
			for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/urandom"} {
				assert.Equal(t, "ok", s.inside(t, sb, nil, "open", dev).get("open"), dev)
			}
			_, own := layPty(t)
			r = s.inside(t, sb, own, "open", "/proc/self/fd/0")
			assert.Equal(t, "ok", r.get("open"), "the command's own terminal reopens")
		})
	}
	sb, _ := s.sandbox(t, corral.RungLandlock, s.config())
	assert.Equal(t, "EACCES", s.inside(t, sb, nil, "open", "/dev/shm").get("open"), "the host's /dev/shm")
}

// TestLayersLandlockRungTempDirsApart runs two sandboxes at once: the
// second must not reach the first one's TMPDIR, nor the host's /tmp.
func TestLayersLandlockRungTempDirsApart(t *testing.T) {
	s := newLayScene(t)
	sb, _ := s.sandbox(t, corral.RungLandlock, s.config())
	first := sb.Command(t.Context(), "sh", "-c", `echo secret > "$TMPDIR/s" && echo "$TMPDIR" && read x; exit 0`)
	stdinR, in, err := os.Pipe()
	require.NoError(t, err)
	defer stdinR.Close()
	out, stdoutW, err := os.Pipe()
	require.NoError(t, err)
	defer out.Close()
	first.Stdin, first.Stdout = stdinR, stdoutW
	require.NoError(t, first.Start())
	stdoutW.Close()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	secret := filepath.Join(strings.TrimSpace(line), "s")
	require.Equal(t, "ok", s.outsideRun(t, nil, "read", secret).get("read"), "without the sandbox the same user reads it")
	hostTmp, err := os.CreateTemp("/tmp", "corral-host-")
	require.NoError(t, err)
	hostTmp.Close()
	t.Cleanup(func() { os.Remove(hostTmp.Name()) })

	r := s.inside(t, sb, nil, "read", secret)
	assert.Equal(t, "EACCES", r.get("open"), "another sandbox's TMPDIR")
	r = s.inside(t, sb, nil, "read", hostTmp.Name())
	assert.Equal(t, "EACCES", r.get("open"), "the host's /tmp")
	in.Close()
	require.NoError(t, first.Wait())
}

// initSignals are what a command sends its init; SIGKILL and SIGSTOP are
// added per rung.
var initSignals = []string{"ABRT", "SEGV", "BUS", "FPE", "ILL", "TRAP", "SYS", "QUIT", "TERM", "INT", "HUP", "USR1", "PIPE", "ALRM"}

// TestLayersInitSurvivesSignals signals the init from inside: the command
// carries on and its status is its own.
func TestLayersInitSurvivesSignals(t *testing.T) {
	s := newLayScene(t)
	// The control: each signal ends a process that has no handler for it.
	for _, sig := range initSignals {
		c := exec.Command("sleep", "100")
		require.NoError(t, c.Start())
		require.NoError(t, c.Process.Signal(unix.SignalNum("SIG"+sig)))
		var ee *exec.ExitError
		require.ErrorAs(t, c.Wait(), &ee)
		require.True(t, ee.Sys().(syscall.WaitStatus).Signaled(), "SIG%s ends a process by default", sig)
	}
	sleeper := func(t *testing.T) string {
		c := exec.Command("sleep", "100")
		require.NoError(t, c.Start())
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return strconv.Itoa(c.Process.Pid)
	}
	control := s.outsideRun(t, nil, "fault", sleeper(t))
	require.Equal(t, "ok", control.get("sigqueue"), "without the sandbox a fault signal is queued")
	require.Equal(t, "ok", control.get("setsig"))
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			target := "1"
			sigs := initSignals
			if rung == corral.RungLandlock {
				target = "$PPID" // the init; PID 1 is the host's
				// Not PID 1 of a namespace, the init can be stopped: the
				// caller continues it. (SIGKILL ends it: see docs/layers.md.)
				sigs = append(sigs, "STOP")
			} else {
				sigs = append(sigs, "KILL", "STOP")
			}
			// The probe's fault signals, queued, are refused before they reach
			// the init.
			pid := "1"
			if rung == corral.RungLandlock {
				pid = sleeper(t) // the filter refuses it whatever the target
			}
			r := s.inside(t, sb, nil, "fault", pid)
			assert.Equal(t, "EPERM", r.get("sigqueue"))
			assert.Equal(t, "EPERM", r.get("setsig"))

			var script strings.Builder
			// A trap keeps the shell itself alive through the signals it
			// receives back (the init forwards what it gets).
			script.WriteString("trap '' " + strings.Join(initSignals, " ") + "; ")
			for _, sig := range sigs {
				script.WriteString("kill -" + sig + " " + target + "; ")
			}
			script.WriteString("echo alive; exit 7")
			c := sb.Command(t.Context(), "sh", "-c", script.String())
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			var ee *corral.ExitError
			require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
			assert.Equal(t, 7, ee.Sys().(syscall.WaitStatus).ExitStatus(), "the command's own status")
			assert.Equal(t, "alive\n", stdout.String())
			// The init's own stderr is the caller's: internal/cli's
			// TestRunInitSurvivesSignals checks that nothing lands there.
		})
	}
}

// layQueueSignal queues sig to pid with the code sigqueue uses, which a Go
// program takes for a fault of its own when sig is SIGILL.
func layQueueSignal(pid int, sig syscall.Signal) error {
	var info [128]byte
	binary.LittleEndian.PutUint32(info[0:], uint32(sig))
	binary.LittleEndian.PutUint32(info[8:], uint32(0xffffffff)) // SI_QUEUE
	binary.LittleEndian.PutUint32(info[16:], uint32(os.Getpid()))
	binary.LittleEndian.PutUint32(info[20:], uint32(os.Getuid()))
	_, _, errno := syscall.Syscall(syscall.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&info[0])))
	if errno != 0 {
		return errno
	}
	return nil
}

// TestLayersInitFailureIsNoStatus crashes a sandbox's init from outside,
// which its command cannot do: the caller gets a setup error naming the
// init, not a status the command never had (internal/cli's
// TestRunInitFailureExits125 checks the caller's stderr).
func TestLayersInitFailureIsNoStatus(t *testing.T) {
	s := newLayScene(t)
	control := exec.Command("sleep", "100")
	require.NoError(t, control.Start())
	require.NoError(t, layQueueSignal(control.Process.Pid, syscall.SIGILL))
	var ee *exec.ExitError
	require.ErrorAs(t, control.Wait(), &ee)
	require.Equal(t, syscall.SIGILL, ee.Sys().(syscall.WaitStatus).Signal(), "a queued SIGILL is delivered")
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			c := sb.Command(t.Context(), "sh", "-c", "exec sleep 100")
			var stderr bytes.Buffer
			c.Stderr = &stderr
			require.NoError(t, c.Start())
			require.NoError(t, layQueueSignal(c.Process.Pid, syscall.SIGILL))
			err := c.Wait()
			var se *corral.SetupError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, corral.LayerInit, se.Layer)
			assert.Empty(t, stderr.String(), "the command's stderr")
		})
	}
}
