package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnsandboxedShell(t *testing.T) {
	dir := t.TempDir()
	res, err := UnsandboxedShell(context.Background(), "pwd; echo err >&2; exit 4", dir)
	require.NoError(t, err)
	real, _ := filepath.EvalSymlinks(dir)
	assert.Equal(t, 4, res.ExitCode)
	assert.Equal(t, real+"\n", res.Stdout)
	assert.Equal(t, "err\n", res.Stderr)
}

func TestUnsandboxedExecTimeoutKillsChildren(t *testing.T) {
	dir := t.TempDir()
	exited := heldFIFO(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := UnsandboxedExec(ctx, "sh", []string{"-c", "exec 3>held; (sleep 2; touch late) & sleep 60"}, dir)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), unsandboxedWaitDelay)
	exited() // every process of the group, the background one included
	assert.NoFileExists(t, filepath.Join(dir, "late"), "the process group was not killed")
}

func TestUnsandboxedExecNotFound(t *testing.T) {
	_, err := UnsandboxedExec(context.Background(), "no-such-program-xyz", nil, "")
	assert.Error(t, err)
}

func TestUnsandboxedFiles(t *testing.T) {
	// No workspace applies: any path the caller can reach works, which is
	// why these are never offered to a model.
	p := filepath.Join(t.TempDir(), "SOUL.md")
	require.NoError(t, UnsandboxedWriteFile(p, []byte("identity")))
	data, err := UnsandboxedReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "identity", string(data))
	entries, err := UnsandboxedListDir(filepath.Dir(p))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "SOUL.md", entries[0].Name())
	_, err = os.Stat(p)
	require.NoError(t, err)
}
