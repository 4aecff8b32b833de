package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// screen is what a terminal's other side has shown so far.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen int // where the next expect starts looking
}

func watch(f *os.File) *screen {
	s := &screen{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

// expect waits for want to appear after what an earlier expect matched.
func (s *screen) expect(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		if i := strings.Index(s.buf.String()[s.seen:], want); i >= 0 {
			s.seen += i + len(want)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("no %q on the terminal; after the last match it shows:\n%s", want, s.buf.String()[s.seen:])
}

// `corral run` on a terminal gives the command a terminal of the sandbox's
// own: a person can use a shell in it. It is the shell's controlling
// terminal (tty names it, job control works), its size follows the
// caller's, Ctrl-C interrupts the foreground job and not the shell, and
// the shell's exit status is corral's.
func TestRunGivesATerminal(t *testing.T) {
	needsSandbox(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	ws := workspace(t)
	c := exec.Command(os.Args[0], "run", "--no-report", "--workspace", ws, "--env", "PS1=READY$ ", "--env", "TERM=dumb",
		"--", "bash", "--norc", "--noprofile", "-i")
	c.Env = append(os.Environ(), cliEnv+"=1")
	ptmx, err := pty.StartWithSize(c, &pty.Winsize{Rows: 33, Cols: 91})
	require.NoError(t, err)
	defer ptmx.Close()
	s := watch(ptmx)
	send := func(line string) {
		_, err := ptmx.Write([]byte(line))
		require.NoError(t, err)
	}

	s.expect(t, "READY$ ")
	send("tty; stty size; echo job control: $(set -o | grep -c 'monitor.*on')\r")
	s.expect(t, "/dev/pts/")
	s.expect(t, "33 91")
	s.expect(t, "job control: 1")

	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 100}))
	time.Sleep(200 * time.Millisecond) // SIGWINCH reaches the CLI, which resizes the command's terminal
	send("stty size\r")
	s.expect(t, "40 100")

	send("echo started; sleep 60; echo not interrupted\r")
	s.expect(t, "started")
	time.Sleep(200 * time.Millisecond)
	send("\x03") // Ctrl-C: the foreground job's
	s.expect(t, "READY$ ")
	send("echo alive $((6*7))\r")
	s.expect(t, "alive 42")

	send("sleep 30 & jobs\r")
	s.expect(t, "Running")
	send("kill %1; exit 7\r")

	err = c.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "corral run: %v", err)
	assert.Equal(t, 7, ee.ExitCode())
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.NotContains(t, s.buf.String(), "\nnot interrupted", "Ctrl-C did not reach the foreground job")
}

// --tty=false keeps today's streams on a terminal: the command has none of
// its own, and its output is corral's.
func TestRunTTYOff(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	c := exec.Command(os.Args[0], "run", "--no-report", "--tty=false", "--workspace", ws, "--", "sh", "-c", "tty; echo done")
	c.Env = append(os.Environ(), cliEnv+"=1")
	ptmx, err := pty.Start(c)
	require.NoError(t, err)
	defer ptmx.Close()
	s := watch(ptmx)
	s.expect(t, "not a tty")
	s.expect(t, "done")
	require.NoError(t, c.Wait())
}
