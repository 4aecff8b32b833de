package seccomp

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/hosttest"
)

// childEnv makes a re-executed test binary load the filter and report what
// each call returned: a filter cannot be removed once loaded.
const childEnv = "CORRAL_SECCOMP_TEST_CHILD"

func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := err.(syscall.Errno); ok {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

func rawErr(errno syscall.Errno) string {
	if errno == 0 {
		return "ok"
	}
	return unix.ErrnoName(errno)
}

func TestFilterChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only as the child of TestFilter")
	}
	runtime.LockOSThread()
	bpf, err := Filter(Options{})
	require.NoError(t, err)
	require.NoError(t, Load(bpf))
	res := map[string]string{}
	res["unshare"] = errnoName(unix.Unshare(unix.CLONE_NEWUSER))
	res["mount"] = errnoName(unix.Mount("none", "/nonexistent", "tmpfs", 0, ""))
	_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
	res["clone3"] = rawErr(e)
	_, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	res["socket unix"] = errnoName(err)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	res["socketpair"] = errnoName(err)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	for name, typ := range map[string]int{"dgram": unix.SOCK_DGRAM, "dgram cloexec": unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, "seqpacket": unix.SOCK_SEQPACKET} {
		fds, err := unix.Socketpair(unix.AF_UNIX, typ, 0)
		res["socketpair "+name] = errnoName(err)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
	}
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	c := byte('x')
	for name, cmd := range map[string]uintptr{"tiocsti": unix.TIOCSTI, "tiocsti high": 1<<32 | unix.TIOCSTI, "tcgets": unix.TCGETS} {
		_, _, e = unix.Syscall(unix.SYS_IOCTL, null.Fd(), cmd, uintptr(unsafe.Pointer(&c)))
		res[name] = rawErr(e)
	}
	// The init starts the command through os/exec after loading: ordinary
	// fork and exec must keep working, nested namespaces must not.
	res["exec"] = errnoName(exec.Command("/bin/true").Run())
	userns := exec.Command("/bin/true")
	userns.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
	err = userns.Run()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	res["clone newuser"] = errnoName(err)
	require.NoError(t, json.NewEncoder(os.Stdout).Encode(res))
}

func TestFilter(t *testing.T) {
	if ok, why := Available(); !ok {
		hosttest.Skip(t, "no seccomp filters here: "+why)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFilterChild$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var res map[string]string
	require.NoError(t, json.NewDecoder(bytesReader(out)).Decode(&res), "%s", out)
	assert.Equal(t, map[string]string{
		"unshare":                  "EPERM",
		"mount":                    "EPERM",
		"clone3":                   "ENOSYS",
		"socket unix":              "EPERM",
		"socketpair":               "ok",
		"socketpair dgram":         "EPERM",
		"socketpair dgram cloexec": "EPERM",
		"socketpair seqpacket":     "ok",
		"tiocsti":                  "EPERM",
		"tiocsti high":             "EPERM",
		"tcgets":                   "ENOTTY",
		"exec":                     "ok",
		"clone newuser":            "EPERM",
	}, res)
}

func TestAvailable(t *testing.T) {
	ok, why := Available()
	switch {
	case KernelSupport() != nil:
		assert.False(t, ok)
		assert.NotEmpty(t, why)
	case slices.Contains(prebuiltArchs, runtime.GOARCH):
		// With or without cgo: the programs come with the build.
		assert.True(t, ok, why)
		assert.Contains(t, Version(), "generated ahead by libseccomp")
	}
}

// BenchmarkFilter is what a Sandbox pays once, in New, where programs are
// generated ahead.
func BenchmarkFilter(b *testing.B) {
	for b.Loop() {
		if _, err := Filter(Options{AllowUnixSockets: true}); err != nil {
			b.Fatal(err)
		}
	}
}
