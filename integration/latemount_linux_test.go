//go:build linux

package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// A mount the host makes after a sandbox was built (removable media under
// /media, an sshfs or rclone mount, a new login's /run/user/UID) must not
// appear in it: the sandbox's tree is a copy of the host's, and a copy
// that takes the host's later mounts shows the new filesystem writable,
// by the kernel's rules, under a path the sandbox shows read-only.

// lateScript writes into dir the ways a command creates names: a new file
// by redirection, a directory, and a file by an atomic rename.
func lateScript(dir string) string {
	return `echo planted > ` + dir + `/probe; mkdir ` + dir + `/d; ` +
		`echo planted > ` + dir + `/t 2>/dev/null; mv ` + dir + `/t ` + dir + `/renamed; true`
}

// lateLanded names what lateScript made in dir.
func lateLanded(dir string) []string {
	var out []string
	for _, n := range []string{"probe", "d", "renamed"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// openDirOutsideTmp is a fresh directory in /var/tmp that every user may
// enter: the sandbox shows the host's copy of it (its /tmp is its own),
// and the unprivileged user's part reaches it.
func openDirOutsideTmp(t *testing.T) string {
	d, err := os.MkdirTemp("/var/tmp", "corral-late-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	require.NoError(t, os.Chmod(d, 0o755))
	return d
}

// sharedBase is a tmpfs at a fresh directory outside /tmp (which the
// sandbox replaces), made shared as / is on systemd hosts, so that mounts
// made beneath it propagate to its copies. It must be called where the
// caller may mount: as root on the host, or in a namespace of its own.
func sharedBase(dir string) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	if err := unix.Mount("", dir, "", unix.MS_SHARED, ""); err != nil {
		return fmt.Errorf("make shared: %w", err)
	}
	return os.Mkdir(filepath.Join(dir, "late"), 0o755)
}

// lateMount mounts a writable tmpfs at late, as the host does when media
// are plugged in.
func lateMount(late string) error {
	if err := unix.Mount("tmpfs", late, "tmpfs", 0, "mode=0777"); err != nil {
		return fmt.Errorf("mount late tmpfs: %w", err)
	}
	return nil
}

// As root on the host: a sandbox built ahead (Warm), by root or by an
// unprivileged user, then a tmpfs mounted under a directory it shows
// read-only; a command writing there must fail, where on the host the same
// write lands on the new mount. The unprivileged user cannot mount on the
// host, so the test needs root, and runs the user's part as a child.
func TestLateHostMountIsNotPropagated(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts on the host: root only (the test runs the unprivileged user's part itself)")
	}
	sandboxtest.Require(t, corral.Config{})
	t.Run("root", func(t *testing.T) { lateHostMount(t, nil) })
	t.Run("unprivileged", func(t *testing.T) {
		u, err := user.Lookup("corral-test")
		if err != nil {
			u, err = user.Lookup("nobody")
		}
		if err != nil {
			t.Skip("no unprivileged user: " + err.Error())
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		lateHostMount(t, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)})
	})
}

// lateHostMount builds a sandbox ahead, as cred's user in a child (nil:
// in this process, as root), mounts beneath a shared tmpfs on the host
// once it is built, and checks that neither the bare probe's user nor
// the sandbox lets a command write there.
func lateHostMount(t *testing.T, cred *syscall.Credential) {
	base := openDirOutsideTmp(t)
	require.NoError(t, sharedBase(base))
	late := filepath.Join(base, "late")
	t.Cleanup(func() {
		unix.Unmount(late, unix.MNT_DETACH)
		unix.Unmount(base, unix.MNT_DETACH)
	})
	ws := openDirOutsideTmp(t)
	if cred != nil {
		require.NoError(t, os.Chown(ws, int(cred.Uid), int(cred.Gid)))
	}

	// The probe without the sandbox, as the same user.
	bare := lateChild(t, cred, ws, late, true)
	bare.next()
	require.NoError(t, lateMount(late))
	require.Equal(t, "landed: [probe d renamed]", bare.next(), "the probe must work on the host's new mount")
	require.NoError(t, unix.Unmount(late, 0))

	boxed := lateChild(t, cred, ws, late, false)
	require.Equal(t, "ready", boxed.next(), "the sandbox is built before the host mounts")
	require.NoError(t, lateMount(late))
	assert.Equal(t, "landed: []", boxed.next(), "wrote onto a mount the host made after the sandbox was built")
	assert.Empty(t, lateLanded(late))
}

// child is a re-executed test binary in the latemount role: it says
// "ready" once its sandbox is built, then, on a line of its stdin, runs
// the probe and says what landed.
type child struct {
	t     *testing.T
	in    io.WriteCloser
	out   *bufio.Scanner
	steps int
}

func (c *child) next() string {
	c.t.Helper()
	if c.steps > 0 {
		fmt.Fprintln(c.in)
	}
	c.steps++
	require.True(c.t, c.out.Scan(), "the child ended early")
	return c.out.Text()
}

func lateChild(t *testing.T, cred *syscall.Credential, ws, late string, bare bool) *child {
	bin := os.Args[0]
	if cred != nil {
		bin = filepath.Join(openDirOutsideTmp(t), "integration.test")
		data, err := os.ReadFile(os.Args[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(bin, data, 0o755))
	}
	c := exec.Command(bin)
	c.Env = append(os.Environ(), roleEnv+"=latemount", "CORRAL_TEST_DIR="+late, "CORRAL_TEST_WS="+ws)
	if bare {
		c.Env = append(c.Env, "CORRAL_TEST_BARE=1")
	}
	c.Dir = ws
	if cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		home := openDirOutsideTmp(t)
		require.NoError(t, os.Chown(home, int(cred.Uid), int(cred.Gid)))
		c.Env = append(c.Env, "HOME="+home, "TMPDIR="+home)
	}
	c.Stderr = os.Stderr
	in, err := c.StdinPipe()
	require.NoError(t, err)
	out, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() {
		in.Close()
		c.Process.Kill()
		c.Wait()
	})
	return &child{t: t, in: in, out: bufio.NewScanner(out)}
}

// runLateMount builds a sandbox ahead (unless CORRAL_TEST_BARE is set),
// says "ready", and once a line arrives on stdin (the test has mounted a
// tmpfs at CORRAL_TEST_DIR meanwhile) writes there, sandboxed or bare, and
// says what landed.
func runLateMount() int {
	late := os.Getenv("CORRAL_TEST_DIR")
	run := func() error { return exec.Command("sh", "-c", lateScript(late)).Run() }
	if os.Getenv("CORRAL_TEST_BARE") == "" {
		sb, err := corral.New(corral.Config{Workspace: os.Getenv("CORRAL_TEST_WS")})
		if err == nil {
			err = sb.Warm(context.Background())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer sb.Close()
		run = func() error {
			return sb.Command(context.Background(), "sh", "-c", lateScript(late)).Run()
		}
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	in.Scan()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
	}
	fmt.Printf("landed: %v\n", lateLanded(late))
	return 0
}
