package integration

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/testhook"
)

// layDenied are the calls the seccomp filter refuses, each with the errno
// the sandboxed probe must see.
var layDenied = map[string]string{
	"mount": "EPERM", "umount2": "EPERM", "pivot_root": "EPERM", "chroot": "EPERM",
	"move_mount": "EPERM", "open_tree": "EPERM", "fsopen": "EPERM", "fsconfig": "EPERM",
	"fsmount": "EPERM", "fspick": "EPERM", "mount_setattr": "EPERM", "unshare": "EPERM",
	"setns": "EPERM", "clone_newuser": "EPERM", "clone_newnet": "EPERM", "clone3": "ENOSYS",
	"keyctl": "EPERM", "add_key": "EPERM", "request_key": "EPERM", "bpf": "EPERM",
	"perf_event_open": "EPERM", "kexec_load": "EPERM", "kexec_file_load": "EPERM",
	"init_module": "EPERM", "finit_module": "EPERM", "delete_module": "EPERM",
	"open_by_handle_at": "EPERM", "userfaultfd": "EPERM", "process_vm_readv": "EPERM",
	"process_vm_writev": "EPERM", "ptrace": "EPERM", "io_uring_setup": "EPERM",
	"io_uring_enter": "EPERM", "io_uring_register": "EPERM", "acct": "EPERM", "swapon": "EPERM",
	"swapoff": "EPERM", "reboot": "EPERM", "syslog": "EPERM", "quotactl": "EPERM",
	"settimeofday": "EPERM", "clock_settime": "EPERM", "adjtimex": "EPERM", "clock_adjtime": "EPERM",
}

func TestLayersDangerousSyscalls(t *testing.T) {
	s := newLayScene(t)
	control := s.outsideRun(t, nil, "syscalls")
	for name, want := range layDenied {
		got := control.get(name)
		require.NotContains(t, got, "missing", name)
		if got == want {
			// Only root passes every capability check, so only as root does
			// each control call reach the kernel's argument checks.
			require.False(t, layRoot(), "%s returns %s without the sandbox as root: the probe proves nothing", name, got)
			t.Logf("%s: the kernel refuses it to this user already (%s); the root run shows the filter", name, got)
		}
	}
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, nil, "syscalls")
			for name, want := range layDenied {
				assert.Equal(t, want, r.get(name), name)
			}
		})
	}
}

func TestLayersForeignArchitectureIsKilled(t *testing.T) {
	s := newLayScene(t)
	for _, how := range []string{"int80", "x32"} {
		control := s.outsideRun(t, nil, "foreign", how)
		if control.killedBy(syscall.SIGSEGV) {
			t.Logf("%s: kernel without 32-bit x86 emulation", how)
		}
		for _, rung := range layRungs {
			t.Run(how+"/"+string(rung), func(t *testing.T) {
				// The filter kills before the kernel looks at the ABI, so the
				// sandboxed run is checked even where the kernel lacks it.
				sb, _ := s.sandbox(t, rung, s.config())
				r := s.inside(t, sb, nil, "foreign", how)
				assert.True(t, r.killedBy(syscall.SIGSYS), "%s ended %v: %s", how, r.status, r.out)
				if control.get(how) != "ok" {
					t.Skipf("kernel without the %s ABI: without the sandbox the call reaches nothing either (%v %s)",
						how, control.status, control.get(how))
				}
			})
		}
	}
}

// layPty opens a new pseudo-terminal and returns both ends.
func layPty(t *testing.T) (master, slave *os.File) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	sl, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { sl.Close() })
	return m, sl
}

func TestLayersTerminalInjection(t *testing.T) {
	s := newLayScene(t)
	_, slave := layPty(t)
	control := s.outsideRun(t, slave, "terminal")
	require.Equal(t, "ok", control.get("tiocsctty"))
	if control.get("tiocsti") == "EIO" {
		t.Skip("dev.tty.legacy_tiocsti=0: the kernel already refuses TIOCSTI to this user")
	}
	require.Equal(t, "ok", control.get("tiocsti"), "TIOCSTI into a session's own terminal works without the sandbox")
	require.Equal(t, "ok", control.get("tiocsti_high"), "the kernel ignores the high bits of the command")
	require.NotEqual(t, "EPERM", control.get("tioclinux"), "TIOCLINUX reaches the tty driver")
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			_, slave := layPty(t)
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, slave, "terminal")
			require.Equal(t, "ok", r.get("tiocsctty"), "the terminal is the probe's own: only the filter stands in the way")
			assert.Equal(t, "EPERM", r.get("tiocsti"))
			assert.Equal(t, "EPERM", r.get("tiocsti_high"), "CVE-2019-10063: high bits must not slip past")
			assert.Equal(t, "EPERM", r.get("tioclinux"))
		})
	}
}

// layUnixListener listens on a socket file in a new directory and on an
// abstract name, the way host daemons do, and counts the connections made
// to them. The directory sits right under /tmp: a socket's path must fit in
// 108 bytes.
func layUnixListener(t *testing.T) (dir, path, abstract string, accepted func() int) {
	dir, err := os.MkdirTemp("/tmp", "corral-sock-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	path = filepath.Join(dir, "daemon.sock")
	abstract = "corral-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var listeners []syscall.RawConn
	for _, addr := range []string{path, "@" + abstract} {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		rc, err := l.SyscallConn()
		require.NoError(t, err)
		listeners = append(listeners, rc)
	}
	var n int
	return dir, path, abstract, func() int {
		// A unix connect returns once its connection is queued on the
		// listener: taking every queued one, without waiting for more,
		// counts each connect made so far.
		for _, rc := range listeners {
			require.NoError(t, rc.Control(func(fd uintptr) {
				for {
					c, _, err := unix.Accept4(int(fd), unix.SOCK_CLOEXEC)
					if err == unix.EINTR {
						continue
					}
					if err != nil {
						return // EAGAIN: the listener is non-blocking and its queue empty
					}
					unix.Close(c)
					n++
				}
			}))
		}
		return n
	}
}

// layDgramListener is a host datagram socket in dir; received counts the
// datagrams that reached it so far.
func layDgramListener(t *testing.T, dir string) (path string, received func() int) {
	path = filepath.Join(dir, "log.sock")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	rc, err := c.SyscallConn()
	require.NoError(t, err)
	var n int
	return path, func() int {
		buf := make([]byte, 64)
		require.NoError(t, rc.Control(func(fd uintptr) {
			// What is queued, without waiting for more.
			for {
				if _, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT); err != nil && err != unix.EINTR {
					return
				} else if err == nil {
					n++
				}
			}
		}))
		return n
	}
}

func TestLayersHostUnixSockets(t *testing.T) {
	s := newLayScene(t)
	sockDir, path, abstract, accepted := layUnixListener(t)
	dgramPath, received := layDgramListener(t, sockDir)
	require.Equal(t, "ok", s.outsideRun(t, nil, "unix", path).get("connect"))
	require.Equal(t, "ok", s.outsideRun(t, nil, "abstract", abstract).get("connect"))
	require.Equal(t, 2, accepted(), "both host sockets answer without the sandbox")
	control := s.outsideRun(t, nil, "dgram", dgramPath)
	require.Equal(t, "ok", control.get("sendto"), "%s", control.out)
	require.Equal(t, "ok", control.get("connect"), "%s", control.out)
	require.Equal(t, 2, received(), "a unix datagram pair reaches the host socket without the sandbox")
	for _, rung := range layRungs {
		t.Run(string(rung)+"/default", func(t *testing.T) {
			cfg := s.config()
			cfg.ReadOnlyPaths = []string{sockDir} // the socket file is visible, read-only
			sb, _ := s.sandbox(t, rung, cfg)
			assert.Equal(t, "EPERM", s.inside(t, sb, nil, "unix", path).get("socket"))
			assert.Equal(t, "EPERM", s.inside(t, sb, nil, "abstract", abstract).get("socket"))
			assert.Equal(t, 2, accepted())
			assert.Equal(t, "EPERM", s.inside(t, sb, nil, "dgram", dgramPath).get("socketpair"))
			assert.Equal(t, 2, received(), "no datagram reaches the host socket: the count is still the control's")
			self := s.inside(t, sb, nil, "selfsock", "own.sock")
			assert.Equal(t, "ok", self.get("socketpair"), "socketpair stays allowed")
		})
		t.Run(string(rung)+"/allowed", func(t *testing.T) {
			cfg := s.config()
			cfg.AllowUnixSockets = true
			sb, _ := s.sandbox(t, rung, cfg)
			r := s.inside(t, sb, nil, "abstract", abstract)
			assert.Equal(t, "ok", r.get("socket"))
			assert.NotEqual(t, "ok", r.get("connect"), "Landlock scoping keeps host abstract sockets out of reach")
			self := s.inside(t, sb, nil, "selfsock", "own.sock") // in the workspace, the working directory
			assert.Equal(t, "ok", self.get("listen"), "%s", self.out)
			assert.Equal(t, "ok", self.get("connect"), "the sandbox's own sockets work")
			os.Remove(filepath.Join(s.ws, "own.sock"))
			assert.Equal(t, 2, accepted())
		})
	}
}

func TestLayersSignalHostProcess(t *testing.T) {
	s := newLayScene(t)
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "300")
		require.NoError(t, c.Start())
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	// The probe's kill has returned by the time the test looks: a SIGTERM
	// it delivered to sleep is fatal, and the kernel marks the process
	// with SIGKILL pending, exiting, or exited, at once.
	alive := func(c *exec.Cmd) bool { return !doomed(t, c.Process.Pid) }
	control := start()
	require.Equal(t, "ok", s.outsideRun(t, nil, "kill", strconv.Itoa(control.Process.Pid)).get("kill"))
	require.False(t, alive(control), "the control run kills the host process")
	require.True(t, exitWithin(time.Minute, control.Process.Pid))
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			victim := start()
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, nil, "kill", strconv.Itoa(victim.Process.Pid))
			assert.Contains(t, []string{"ESRCH", "EPERM"}, r.get("kill"))
			assert.True(t, alive(victim), "the host process survives")
		})
	}
}

// reachRoutes are the routes the probe's reach tries, one line each.
var reachRoutes = []string{
	"kill", "killpg", "sigqueue", "tgkill", "tkill", "tgsigqueue", "pidfd", "pidfd_thread",
	"prlimit", "setpriority", "affinity", "scheduler", "ioprio",
}

// TestLayersReachHostProcess tries every route by which a process acts on
// another of the same user (signals by pid, group, thread and pidfd; its
// resource limits, priority, affinity, scheduling and I/O priority) against
// a host process: each works from the host and none from inside.
func TestLayersReachHostProcess(t *testing.T) {
	s := newLayScene(t)
	victim := exec.Command("sleep", "300")
	require.NoError(t, victim.Start())
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	pid := strconv.Itoa(victim.Process.Pid)
	control := s.outsideRun(t, nil, "reach", pid)
	for _, route := range reachRoutes {
		require.Equal(t, "ok", control.get(route), "control run, %s", route)
	}
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, nil, "reach", pid)
			for _, route := range reachRoutes {
				assert.Contains(t, []string{"EPERM", "ESRCH"}, r.get(route), "%s", route)
			}
		})
	}
}

// TestLayersInitOutOfReach has the command go for its own init by every
// route: on the landlock rung, where the init is not PID 1 of a namespace,
// each is refused; on both, SIGKILL by each route and lowering the init's
// limits leave the command's status its own and the sandbox usable. The
// control runs the same probe under a shell, which the routes reach and
// the SIGKILLs end.
func TestLayersInitOutOfReach(t *testing.T) {
	s := newLayScene(t)
	parent := func(op string) *exec.Cmd {
		c := exec.Command("sh", "-c", s.probe+" "+op+" parent; echo survived")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return c
	}
	out, err := parent("reach").Output()
	require.NoError(t, err)
	control := layResult{vals: parseLay(out), out: string(out)}
	for _, route := range reachRoutes {
		require.Equal(t, "ok", control.get(route), "control run, %s", route)
	}
	out, err = parent("hit").Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the control's shell is killed: %s", out)
	assert.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())
	assert.NotContains(t, string(out), "survived")
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, nil, "reach", "parent")
			routes := []string{"prlimit"}
			if rung == corral.RungLandlock {
				routes = reachRoutes
			}
			for _, route := range routes {
				assert.Equal(t, "EPERM", r.get(route), "%s", route)
			}
			h := s.inside(t, sb, nil, "hit", "parent")
			require.NoError(t, h.err, "the command's own status: %s", h.out)
			assert.Equal(t, "done", h.get("hit"))
			again := s.inside(t, sb, nil, "reach", "parent")
			require.NoError(t, again.err, "the sandbox still runs commands: %s", again.out)
		})
	}
}

// layLoopback listens on the host's loopback for TCP and UDP on one port
// and reports whether anything arrived.
func layLoopback(t *testing.T) (port string, arrived func() bool) {
	tl, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { tl.Close() })
	port = strconv.Itoa(tl.Addr().(*net.TCPAddr).Port)
	ul, err := net.ListenPacket("udp4", "127.0.0.1:"+port)
	require.NoError(t, err)
	t.Cleanup(func() { ul.Close() })
	got := make(chan string, 16)
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			got <- "tcp"
			c.Close()
		}
	}()
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := ul.ReadFrom(buf); err != nil {
				return
			}
			got <- "udp"
		}
	}()
	return port, func() bool {
		select {
		case <-got:
			return true
		case <-time.After(200 * time.Millisecond):
			return false
		}
	}
}

func TestLayersNetworkNone(t *testing.T) {
	s := newLayScene(t)
	port, arrived := layLoopback(t)
	for _, proto := range []string{"tcp", "udp"} {
		s.outsideRun(t, nil, proto, port)
		require.True(t, arrived(), "the control run reaches the host's loopback over %s", proto)
		for _, rung := range layRungs {
			t.Run(proto+"/"+string(rung), func(t *testing.T) {
				cfg := s.config()
				cfg.Network = corral.NetworkNone
				sb, _ := s.sandbox(t, rung, cfg)
				r := s.inside(t, sb, nil, proto, port)
				assert.False(t, arrived(), "%s reached the host: %s", proto, r.out)
			})
		}
	}
}

func TestLayersWritesOutside(t *testing.T) {
	s := newLayScene(t)
	target := filepath.Join(s.outside, "planted")
	require.Equal(t, "ok", s.outsideRun(t, nil, "write", target).get("write"))
	require.NoError(t, os.Remove(target))
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, nil, "write", target)
			// The full rung's private /tmp may hide the directory entirely.
			assert.Contains(t, []string{"EROFS", "EACCES", "ENOENT"}, r.get("open"))
			assert.NoFileExists(t, target)
			r = s.inside(t, sb, nil, "write", "/etc/corral-planted")
			assert.Contains(t, []string{"EROFS", "EACCES"}, r.get("open"))
			r = s.inside(t, sb, nil, "write", filepath.Join(s.ws, "mine"))
			assert.Equal(t, "ok", r.get("write"), "the workspace stays writable")
			assert.FileExists(t, filepath.Join(s.ws, "mine"))
		})
	}
}

// TestLayersLandlockRungPaths attacks what the landlock rung enforces with
// Landlock alone, where the full rung has mounts: read-only and protected
// paths inside the workspace, hidden paths, the host's /tmp.
func TestLayersLandlockRungPaths(t *testing.T) {
	s := newLayScene(t)
	data := filepath.Join(s.ws, "data")
	hooks := filepath.Join(s.ws, ".git", "hooks")
	secret := filepath.Join(s.outside, "secret")
	for _, d := range []string{data, hooks, secret} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(secret, "token"), []byte("s3cr3t"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(s.ws, "proj"), 0o755))
	hostTmp := layDir(t)
	attacks := []struct{ op, path string }{
		{"write", filepath.Join(data, "x")},
		{"write", filepath.Join(hooks, "pre-commit")},
		{"read", filepath.Join(secret, "token")},
		{"write", filepath.Join(hostTmp, "x")},
	}
	for _, a := range attacks {
		require.Equal(t, "ok", s.outsideRun(t, nil, a.op, a.path).get("open"), "control %s %s", a.op, a.path)
		os.Remove(filepath.Join(data, "x"))
		os.Remove(filepath.Join(hooks, "pre-commit"))
		os.Remove(filepath.Join(hostTmp, "x"))
	}
	cfg := s.config()
	cfg.ReadOnlyPaths = []string{data}
	cfg.HiddenPaths = []string{secret}
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, cfg)
			for _, a := range attacks {
				r := s.inside(t, sb, nil, a.op, a.path)
				if rung == corral.RungFull && strings.HasPrefix(a.path, hooks) {
					continue // staged: the write works inside and never lands
				}
				assert.NotEqual(t, "ok", r.get("open"), "%s %s", a.op, a.path)
			}
			assert.NoFileExists(t, filepath.Join(data, "x"))
			assert.NoFileExists(t, filepath.Join(hooks, "pre-commit"))
			r := s.inside(t, sb, nil, "write", filepath.Join(s.ws, "proj", "main.go"))
			assert.Equal(t, "ok", r.get("write"), "beside the protected path, writing works")
		})
	}
}

func TestLayersHostProcEnviron(t *testing.T) {
	s := newLayScene(t)
	c := exec.Command("sleep", "300")
	c.Env = []string{"CORRAL_LAYERS_SECRET=hunter2"}
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	environ := "/proc/" + strconv.Itoa(c.Process.Pid) + "/environ"
	require.Equal(t, "ok", s.outsideRun(t, nil, "read", environ).get("read"), "a process of the same user reads it without the sandbox")
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := s.sandbox(t, rung, s.config())
			r := s.inside(t, sb, nil, "read", environ)
			assert.NotEqual(t, "ok", r.get("read"))
			assert.Contains(t, []string{"ENOENT", "EACCES", "EPERM"}, r.get("open"))
		})
	}
}

func TestLayersLandlockRungTempDir(t *testing.T) {
	s := newLayScene(t)
	sb, logs := s.sandbox(t, corral.RungLandlock, s.config())
	require.Len(t, *logs, 1, "the rung is announced once")
	out, err := sb.Command(t.Context(), "sh", "-c", `echo "$TMPDIR"; echo x > "$TMPDIR/f" && cat "$TMPDIR/f"`).Output()
	require.NoError(t, err)
	lines := strings.Fields(string(out))
	require.Len(t, lines, 2, "%s", out)
	assert.Equal(t, "x", lines[1], "TMPDIR is writable")
	assert.NoDirExists(t, lines[0], "the temp dir goes with the command")
}

// layMarked finds host processes whose command line holds mark.
func layMarked(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), mark) {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// layGone reports whether every process marked with mark exits, waiting
// on their pidfds.
func layGone(mark string) bool { return exitWithin(10*time.Second, layMarked(mark)...) }

func TestLayersLandlockRungLeavesNothingBehind(t *testing.T) {
	s := newLayScene(t)
	sb, _ := s.sandbox(t, corral.RungLandlock, s.config())
	mark := strconv.Itoa(600000 + os.Getpid()%100000)
	script := "(sleep " + mark + " &) ; sleep " + mark + "1 & echo started"
	out, err := sb.Command(t.Context(), "sh", "-c", script).Output()
	require.NoError(t, err, "%s", out)
	assert.True(t, layGone(mark), "orphans of an exited command are killed")

	ctx, cancel := contextWithCancel(t)
	c := sb.Command(ctx, "sh", "-c", "(sleep "+mark+"2 &); sleep "+mark+"3")
	require.NoError(t, c.Start())
	require.Eventually(t, func() bool { return len(layMarked(mark+"2")) > 0 }, 5*time.Second, 10*time.Millisecond)
	cancel()
	err = c.Wait()
	require.Error(t, err)
	assert.True(t, layGone(mark), "cancelling kills the command and everything it started")
}

func TestLayersFallback(t *testing.T) {
	s := newLayScene(t)
	full := func(t *testing.T) {
		r, err := corral.Doctor(corral.Config{})
		require.NoError(t, err)
		if !r.OK {
			hosttest.Skip(t, "this host cannot give the full rung, so switching one layer off proves nothing: "+layMissing(r))
		}
	}
	t.Run("fail names the layer", func(t *testing.T) {
		full(t)
		defer testhook.Disable(corral.LayerUserNS)()
		_, err := corral.New(s.config())
		var se *corral.SetupError
		require.True(t, errors.As(err, &se), "%v", err)
		assert.Equal(t, corral.LayerUserNS, se.Layer)
		assert.Contains(t, err.Error(), "disabled by a test")
	})
	t.Run("fail without fresh proc", func(t *testing.T) {
		full(t)
		defer testhook.Disable(corral.LayerProc)()
		_, err := corral.New(s.config())
		var se *corral.SetupError
		require.True(t, errors.As(err, &se), "%v", err)
		assert.Equal(t, corral.LayerProc, se.Layer, "host /proc/<pid>/environ must never be exposed")
	})
	t.Run("none runs unsandboxed when allowed", func(t *testing.T) {
		sb, logs := s.sandbox(t, corral.RungNone, s.config())
		require.Len(t, *logs, 1)
		assert.Contains(t, (*logs)[0], "sandbox disabled")
		target := filepath.Join(s.outside, "unsandboxed")
		assert.Equal(t, "ok", s.inside(t, sb, nil, "write", target).get("write"))
		assert.FileExists(t, target)
	})
}

func TestLayersDoctor(t *testing.T) {
	r, err := corral.Doctor(corral.Config{})
	require.NoError(t, err)
	require.Len(t, r.Layers, 9)
	if !r.OK {
		hosttest.Skip(t, "this host cannot give the full rung: "+layMissing(r))
	}
	assert.Equal(t, corral.RungFull, r.Rung)
	assert.Empty(t, r.Without)

	defer testhook.Disable(corral.LayerUserNS)()
	r, err = corral.Doctor(corral.Config{})
	require.NoError(t, err)
	assert.False(t, r.OK)
	assert.Contains(t, r.Problem, corral.LayerUserNS)
	r, err = corral.Doctor(corral.Config{Fallback: corral.FallbackWarn})
	require.NoError(t, err)
	assert.True(t, r.OK)
	assert.Contains(t, []corral.Rung{corral.RungLandlock, corral.RungNone}, r.Rung)

	_, err = corral.Doctor(corral.Config{Fallback: "sometimes"})
	var ce *corral.ConfigError
	require.ErrorAs(t, err, &ce)
}

// layCallerEnv makes a re-executed test binary play a caller on the
// landlock rung: it starts a command that leaves a background process, says
// "started" and waits to be killed.
const layCallerEnv = "CORRAL_LAYERS_CALLER_MARK"

func TestLayersCallerRole(t *testing.T) {
	mark := os.Getenv(layCallerEnv)
	if mark == "" {
		t.Skip("runs only as the caller of TestLayersLandlockRungDiesWithItsCaller")
	}
	defer testhook.Disable(corral.LayerUserNS)()
	sb, err := corral.New(corral.Config{Workspace: os.Getenv("CORRAL_LAYERS_WS"), Fallback: corral.FallbackWarn})
	require.NoError(t, err)
	c := sb.Command(t.Context(), "sh", "-c", "(sleep "+mark+"1 &); sleep "+mark+"2")
	require.NoError(t, c.Start())
	require.Eventually(t, func() bool { return len(layMarked(mark+"1")) > 0 }, 5*time.Second, 10*time.Millisecond)
	os.Stdout.WriteString("started\n")
	select {}
}

func TestLayersLandlockRungDiesWithItsCaller(t *testing.T) {
	s := newLayScene(t)
	s.sandbox(t, corral.RungLandlock, s.config()) // skips where the rung is unavailable
	mark := strconv.Itoa(700000 + os.Getpid()%100000)
	c := exec.Command(os.Args[0], "-test.run=^TestLayersCallerRole$")
	c.Env = append(os.Environ(), layCallerEnv+"="+mark, "CORRAL_LAYERS_WS="+s.ws)
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	line := make([]byte, 8)
	_, err = io.ReadFull(out, line)
	require.NoError(t, err)
	require.Equal(t, "started\n", string(line))
	require.NotEmpty(t, layMarked(mark), "the sandbox runs")
	require.NoError(t, c.Process.Kill())
	c.Wait()
	assert.True(t, layGone(mark), "with no PID namespace, the init still takes everything along when the caller dies")
}
