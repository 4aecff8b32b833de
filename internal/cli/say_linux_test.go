package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal: its master and its slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals: " + err.Error())
	}
	t.Cleanup(func() { m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	return m, s
}

// On a terminal, corral's lines first put the terminal back to plain text
// and mark "corral" in reverse video: a command that leaves the terminal
// concealing text (ESC[8m) or in the line-drawing character set does not
// hide them, and a line the command prints in corral's words carries no
// mark. Printed to a pipe, the same line is plain (TestRunReportSummaryLine).
func TestRunLinesOnATerminal(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	target := refusedTarget(t)
	fake := "corral: refused 99 writes (outside the writable paths), e.g. /fake"
	script := `printf '\033[8m\016'; echo '` + fake + `' >&2; echo x > ` + target + ` 2>/dev/null; true`
	master, slave := openPty(t)
	c := exec.Command(os.Args[0], "run", "--", "sh", "-c", script)
	c.Env = append(os.Environ(), cliEnv+"=1")
	c.Dir = ws
	c.Stderr = slave
	var stdout bytes.Buffer
	c.Stdout = &stdout
	require.NoError(t, c.Start())
	slave.Close()
	var out bytes.Buffer
	_, err := io.Copy(&out, master)
	if err != nil && !errors.Is(err, syscall.EIO) { // EIO: the last slave closed
		require.NoError(t, err)
	}
	require.NoError(t, c.Wait())
	got := out.String()
	want := termReset + "\x1b[7mcorral\x1b[27m: refused 1 write (outside the writable paths), e.g. " + target +
		"; --writable (writable_paths) allows it"
	assert.Contains(t, got, want)
	assert.Equal(t, 1, strings.Count(got, "\x1b[7mcorral"), "the command's own line is not marked: %q", got)
	assert.Contains(t, got, fake, "the command's line is as it wrote it")
}

// Everyday commands through corral run itself, with and without --scope,
// print no corral: line: not mkdir -p of what exists, not rm -f of what
// does not, not the C library's probes of `ls -l` and `id`, not the caches
// npm and git write in the persistent home. The last command, a real
// refusal, prints one.
func TestRunEverydayPrintsNothing(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	state := workspace(t)
	scope := []string{"--scope", "everyday", "--state-dir", state}
	tests := []struct {
		script string
		scoped bool
		needs  string
	}{
		{script: "ls -l / >/dev/null && id && whoami"},
		{script: "mkdir -p /usr/lib /tmp/x && rm -f /usr/no-such-file"},
		{script: "echo x > f && mkdir -p d && mv f d/ && rm -r d"},
		{script: "ls -la ~ >/dev/null && mkdir -p ~/.cache/everyday && echo x > ~/.cache/everyday/f", scoped: true},
		{script: "git init -q r && git -C r -c user.name=t -c user.email=t@t commit -q --allow-empty -m x", needs: "git"},
		{script: `mkdir -p p app && echo '{"name":"p","version":"1.0.0"}' > p/package.json && cd app && echo '{"name":"app"}' > package.json &&
			npm install --offline --no-audit --no-fund ../p >/dev/null`, scoped: true, needs: "npm"},
	}
	for i, tt := range tests {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			if tt.needs != "" {
				if _, err := exec.LookPath(tt.needs); err != nil {
					t.Skip(tt.needs + " is not installed on this host")
				}
			}
			args := []string{"run"}
			if tt.scoped {
				args = append(args, scope...)
			}
			_, stderr, code := cli(t, ws, append(args, "--", "sh", "-c", tt.script)...)
			assert.Equal(t, 0, code, "%s: %s", tt.script, stderr)
			assert.NotContains(t, stderr, "corral:", tt.script)
		})
	}
	target := refusedTarget(t)
	_, stderr, code := cli(t, ws, append(append([]string{"run"}, scope...), "--", "sh", "-c", "echo x 2>/dev/null > "+target+"; ls -l >/dev/null; id >/dev/null")...)
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, "corral: refused 1 write (outside the writable paths), e.g. "+target+"; --writable (writable_paths) allows it\n", stderr)
}
