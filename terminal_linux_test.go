package corral_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// Cmd.Terminal gives the command a terminal of the sandbox's own, its
// controlling one; the caller reads and writes its other side. Without it
// the command has none.
func TestCmdTerminal(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cfg := corral.Config{Workspace: ws}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()

	script := `tty; read line; echo "got $line"; test -t 0 && test -t 2 && echo all terminals`
	c := sb.Command(context.Background(), "sh", "-c", script)
	c.Terminal = true
	require.NoError(t, c.Start())
	term := c.TerminalFile()
	require.NotNil(t, term)
	defer term.Close()
	_, err = term.Write([]byte("hello\n"))
	require.NoError(t, err)
	require.NoError(t, c.Wait())
	out, _ := io.ReadAll(term) // until the terminal's last holder is gone
	lines := strings.ReplaceAll(string(out), "\r\n", "\n")
	assert.Contains(t, lines, "/dev/pts/")
	assert.Contains(t, lines, "got hello")
	assert.Contains(t, lines, "all terminals")

	c = sb.Command(context.Background(), "sh", "-c", "tty")
	b, _ := c.Output()
	assert.Equal(t, "not a tty\n", string(b), "without Terminal")
	assert.Nil(t, c.TerminalFile())

	c = sb.Command(context.Background(), "true")
	c.Terminal, c.Stdin = true, os.Stdin
	assert.ErrorContains(t, c.Start(), "Stdin, Stdout and Stderr must be nil")
}
