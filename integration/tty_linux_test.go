package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPty returns a new pseudo-terminal's master and slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return m, s
}

// tiocsti pushes a character into the input of the terminal on stdin: the
// classic way to type commands into the caller's shell.
const tiocsti = `perl -e 'my $c = "x"; ioctl(STDIN, 0x5412, $c) or die "TIOCSTI: $!\n"; print "injected\n"'`

func TestNoTerminalInjection(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); err == nil && strings.TrimSpace(string(b)) == "0" && os.Geteuid() != 0 {
		t.Skip("the kernel has TIOCSTI disabled (dev.tty.legacy_tiocsti=0)")
	}
	_, slave := openPty(t)

	// Control: a command whose controlling terminal is the pty can inject.
	bare := exec.Command("sh", "-c", tiocsti)
	bare.Stdin = slave
	var out bytes.Buffer
	bare.Stdout, bare.Stderr = &out, &out
	bare.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, bare.Run(), "the probe must work without the sandbox: %s", out.String())
	require.Contains(t, out.String(), "injected")

	w := newWorld(t)
	sb := newSandbox(t, w.config())
	c := sb.Command(context.Background(), "sh", "-c", tiocsti)
	c.Stdin = slave
	got, err := c.CombinedOutput()
	assert.Error(t, err)
	assert.NotContains(t, string(got), "injected")
	assert.Contains(t, string(got), "TIOCSTI")
}

func TestTerminalStillWorks(t *testing.T) {
	_, slave := openPty(t)
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	c := sb.Command(context.Background(), "sh", "-c", "test -t 0 && stty size >/dev/null && echo tty-ok")
	c.Stdin = slave
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "tty-ok\n", string(out))
}
