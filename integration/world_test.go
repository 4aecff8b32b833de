//go:build linux

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// world is the host-side scene of one attack: a workspace with a read-only
// data directory and a hidden directory inside it, and a directory outside
// that nothing configures.
type world struct {
	t       *testing.T
	ws      string // the workspace
	data    string // ws/data, configured read-only
	secret  string // ws/secret, configured hidden
	outside string // a sibling directory, not configured
	vars    []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, ws: realDir(t), outside: realDir(t)}
	w.data = filepath.Join(w.ws, "data")
	w.secret = filepath.Join(w.ws, "secret")
	require.NoError(t, os.Mkdir(w.data, 0o755))
	require.NoError(t, os.Mkdir(w.secret, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.secret, "token"), []byte("s3cr3t-payload"), 0o600))
	w.vars = []string{"WS=" + w.ws, "DATA=" + w.data, "SECRET=" + w.secret, "OUTSIDE=" + w.outside}
	return w
}

// realDir is a temporary directory with symlinks resolved, as the sandbox
// sees it.
func realDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func (w *world) config() corral.Config {
	return corral.Config{
		Workspace:     w.ws,
		ReadOnlyPaths: []string{w.data},
		HiddenPaths:   []string{w.secret},
	}
}

// result is what a probe printed and how it ended.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
}

// env is the environment probes get in both runs.
func (w *world) env(extra ...string) []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + w.ws}
	return append(append(env, w.vars...), extra...)
}

// sandboxed runs script with sh -c inside a sandbox built from cfg.
func (w *world) sandboxed(cfg corral.Config, script string) result {
	w.t.Helper()
	sandboxtest.Require(w.t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(w.t, err)
	defer sb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sb.Command(ctx, "sh", "-c", script)
	c.Env = w.env()
	return collect(w.t, c.Run, &c.Stdout, &c.Stderr, func() int { return c.ProcessState.ExitCode() })
}

// bare runs script with sh -c directly on the host, in the workspace.
func (w *world) bare(script string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", script)
	c.Env = w.env()
	c.Dir = w.ws
	return collect(w.t, c.Run, &c.Stdout, &c.Stderr, func() int { return c.ProcessState.ExitCode() })
}

func collect(t *testing.T, run func() error, stdout, stderr *io.Writer, code func() int) result {
	t.Helper()
	var out, errb bytes.Buffer
	*stdout, *stderr = &out, &errb
	err := run()
	var exitErr interface{ ExitCode() int }
	if err != nil && !errors.As(err, &exitErr) {
		require.NoError(t, err, "running the probe: %s", errb.String())
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code()}
}

// exists reports whether path exists on the host.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// fileHas reports whether the host file at path contains s.
func fileHas(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(b), s)
}

func itoa(i int) string { return strconv.Itoa(i) }

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
