package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// sbFileWorkspace is a workspace holding a hidden directory, a read-only
// directory and a protected .vscode, and a SandboxFile on it.
func sbFileWorkspace(t *testing.T) (string, *SandboxFile) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	for _, d := range []string{"keys", "ro", ".vscode", "sub"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	writeFile(t, filepath.Join(ws, "keys", "id"), "key material\n", 0o600)
	writeFile(t, filepath.Join(ws, "ro", "data"), "data\n", 0o644)
	writeFile(t, filepath.Join(ws, "a.txt"), "alpha\nbeta\nbeta\n", 0o644)
	cfg := corral.Config{
		Workspace:     ws,
		HiddenPaths:   []string{filepath.Join(ws, "keys")},
		ReadOnlyPaths: []string{filepath.Join(ws, "ro")},
		Env:           []string{"PATH=" + testPath},
	}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	f, err := NewSandboxFile(sb)
	require.NoError(t, err)
	return ws, f
}

func TestSandboxFile(t *testing.T) {
	ctx := context.Background()
	ws, f := sbFileWorkspace(t)

	got, err := f.Read(ctx, "a.txt")
	require.NoError(t, err)
	assert.Equal(t, "alpha\nbeta\nbeta\n", got)

	require.NoError(t, f.Write(ctx, "sub/new/n.txt", "new\n"))
	data, err := os.ReadFile(filepath.Join(ws, "sub", "new", "n.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(data))

	require.NoError(t, f.Edit(ctx, "a.txt", "alpha", "gamma"))
	got, err = f.Read(ctx, "a.txt")
	require.NoError(t, err)
	assert.Equal(t, "gamma\nbeta\nbeta\n", got)

	var me *MatchError
	require.ErrorAs(t, f.Edit(ctx, "a.txt", "beta", "x"), &me)
	assert.Equal(t, 2, me.Matches)
	require.ErrorAs(t, f.Edit(ctx, "a.txt", "delta", "x"), &me)
	assert.Equal(t, 0, me.Matches)

	entries, cut, err := f.List(ctx, ".")
	require.NoError(t, err)
	assert.False(t, cut)
	assert.Contains(t, entries, Entry{Name: "a.txt", Type: "file", Size: int64(len("gamma\nbeta\nbeta\n"))})
	assert.Contains(t, entries, Entry{Name: "sub", Type: "dir"})

	_, err = f.Read(ctx, "missing")
	assert.ErrorIs(t, err, ErrNotExist)
	_, err = f.Read(ctx, "sub")
	assert.ErrorIs(t, err, ErrIsDir)
	_, _, err = f.List(ctx, "a.txt")
	assert.ErrorIs(t, err, ErrNotDir)
	_, err = f.Read(ctx, "../outside")
	assert.ErrorIs(t, err, ErrOutsideWorkspace)
	assert.ErrorIs(t, f.Write(ctx, "SOUL.md", "x"), ErrProtected)

	f.MaxReadBytes = 3
	_, err = f.Read(ctx, "a.txt")
	assert.ErrorIs(t, err, ErrTooLarge)
}

// TestSandboxFileKeepsTheSandboxRules: what the sandbox hides, keeps
// read-only or protects inside the workspace stays so through the file
// tool, with the kernel's own reason; the in-process File, the control,
// reaches every one of them.
func TestSandboxFileKeepsTheSandboxRules(t *testing.T) {
	ctx := context.Background()
	ws, f := sbFileWorkspace(t)

	_, err := f.Read(ctx, "keys/id")
	assert.ErrorContains(t, err, "Permission denied")
	_, _, err = f.List(ctx, "keys")
	assert.Error(t, err)
	assert.ErrorContains(t, f.Write(ctx, "ro/data", "changed"), "Read-only file system")
	assert.ErrorIs(t, f.Write(ctx, ".vscode/tasks.json", "{}"), ErrPlanting)
	assert.NoFileExists(t, filepath.Join(ws, ".vscode", "tasks.json"))

	plain, err := NewFile(ws)
	require.NoError(t, err)
	got, err := plain.Read("keys/id")
	require.NoError(t, err, "control: the in-process tool reads the hidden file")
	assert.Equal(t, "key material\n", got)
	require.NoError(t, plain.Write("ro/data", "changed"), "control: the in-process tool writes the read-only file")
	require.NoError(t, plain.Write(".vscode/tasks.json", "{}"), "control: the in-process tool plants")
}

// TestFileToolsRefuseProtectedEntries: a write through either file tool
// built on a sandbox onto a protected entry (git's config and hooks, an
// agent's MCP servers, an editor's tasks) is refused with the rule named,
// and nothing lands, where a tool that answered "Wrote N bytes" would have
// had its content dropped or held by the guard, or (File, writing from the
// calling process) planted a config the next host `git status` runs. The
// plain File, the control, plants them; AllowPlanting leaves its name
// writable.
func TestFileToolsRefuseProtectedEntries(t *testing.T) {
	ctx := context.Background()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	for _, d := range []string{".git/hooks", "sub/.git", ".vscode", "notes"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	writeFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	writeFile(t, filepath.Join(ws, ".git", "config"), "[core]\n", 0o644)
	cfg := corral.Config{Workspace: ws, Env: []string{"PATH=" + testPath}, AllowPlanting: []string{".envrc"}}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	sbf, err := NewSandboxFile(sb)
	require.NoError(t, err)
	inproc, err := NewFileFor(sb)
	require.NoError(t, err)

	planted := map[string]string{
		".git/config":           "[core]\n\tfsmonitor = touch /tmp/pwned\n",
		".git/hooks/pre-commit": "#!/bin/sh\ntouch /tmp/pwned\n",
		"sub/.git/config":       "[core]\n\tfsmonitor = x\n",
		".mcp.json":             `{"mcpServers":{"x":{"command":"touch"}}}`,
		".vscode/tasks.json":    `{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}`,
		"/workspace/.mcp.json":  "{}",
		"notes/HEAD":            "ref: refs/heads/main\n",
	}
	for p, content := range planted {
		if filepath.IsAbs(p) && sb.WorkspaceDir() != "/workspace" {
			p = filepath.Join(sb.WorkspaceDir(), filepath.Base(p))
		}
		var pe *PlantingError
		require.ErrorAs(t, sbf.Write(ctx, p, content), &pe, p)
		assert.ErrorContains(t, sbf.Write(ctx, p, content), "refused: protected", p)
		require.ErrorAs(t, inproc.Write(p, content), &pe, p)
		assert.NotEmpty(t, pe.What)
		assert.ErrorIs(t, sbf.Edit(ctx, p, "x", "y"), ErrPlanting, p)
	}
	data, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
	require.NoError(t, err)
	assert.Equal(t, "[core]\n", string(data), "nothing landed")
	for _, p := range []string{".git/hooks/pre-commit", ".mcp.json", ".vscode/tasks.json", "notes/HEAD"} {
		assert.NoFileExists(t, filepath.Join(ws, p))
	}

	// Ordinary names beside them still write; AllowPlanting's stay writable.
	require.NoError(t, sbf.Write(ctx, "notes/config", "plain"))
	require.NoError(t, inproc.Write("notes/hooks.txt", "plain"))
	require.NoError(t, inproc.Write(".envrc", "export A=1"))

	plain, err := NewFile(ws)
	require.NoError(t, err)
	require.NoError(t, plain.Write(".git/config", planted[".git/config"]), "control: the unguarded tool plants")
	data, err = os.ReadFile(filepath.Join(ws, ".git", "config"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "fsmonitor")
}

// TestFileForHoldsWhatItChecked: a directory swapped for a symlink into
// .git between NewFileFor's checks and its write (as a command running
// meanwhile could) leads the write nowhere: it fails, and .git/config is
// unchanged. The control, os.Root's own write after the same swap, lands
// in .git/config.
func TestFileForHoldsWhatItChecked(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	gitConfig := filepath.Join(ws, ".git", "config")
	writeFile(t, gitConfig, "[core]\n", 0o644)
	cfg := corral.Config{Workspace: ws, Env: []string{"PATH=" + testPath}}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	f, err := NewFileFor(sb)
	require.NoError(t, err)

	swap := func() {
		require.NoError(t, os.Rename(filepath.Join(ws, "sub"), filepath.Join(ws, "sub.old")))
		require.NoError(t, os.Symlink(".git", filepath.Join(ws, "sub")))
	}
	unswap := func() {
		require.NoError(t, os.Remove(filepath.Join(ws, "sub")))
		require.NoError(t, os.Rename(filepath.Join(ws, "sub.old"), filepath.Join(ws, "sub")))
	}
	testHookBeforeWrite = swap
	t.Cleanup(func() { testHookBeforeWrite = nil })
	assert.Error(t, f.Write("sub/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n"))
	data, err := os.ReadFile(gitConfig)
	require.NoError(t, err)
	assert.Equal(t, "[core]\n", string(data))
	unswap()

	// The last name swapped for a symlink to .git/config: refused too.
	writeFile(t, filepath.Join(ws, "sub", "notes"), "x", 0o644)
	testHookBeforeWrite = func() {
		require.NoError(t, os.Remove(filepath.Join(ws, "sub", "notes")))
		require.NoError(t, os.Symlink("../.git/config", filepath.Join(ws, "sub", "notes")))
	}
	assert.Error(t, f.Write("sub/notes", "[core]\n\tfsmonitor = touch /tmp/pwned\n"))
	data, err = os.ReadFile(gitConfig)
	require.NoError(t, err)
	assert.Equal(t, "[core]\n", string(data))
	testHookBeforeWrite = nil

	// Control: os.Root follows the swapped directory, within the root.
	swap()
	root, err := os.OpenRoot(ws)
	require.NoError(t, err)
	defer root.Close()
	require.NoError(t, root.WriteFile("sub/config", []byte("planted"), 0o644))
	data, err = os.ReadFile(gitConfig)
	require.NoError(t, err)
	assert.Equal(t, "planted", string(data), "control: the unheld write lands in .git/config")
}

// TestFileToolsRefuseWhatTheHostFollows: what a program on the host
// reaches through a protected entry, or git runs from a worktree, is
// protected for the file tools as for a command: a protected symlink's
// target, a symlink inside a protected directory, the hooks directory
// core.hooksPath names (also a nested repository's) and a module a filter
// driver runs. Each is planted by the plain File, the control.
func TestFileToolsRefuseWhatTheHostFollows(t *testing.T) {
	ctx := context.Background()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	for _, d := range []string{".git/hooks", "tools/hooks", "tools/vscode", "shared", ".claude", "vendor/lib/.git", "vendor/lib/scripts"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	writeFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	writeFile(t, filepath.Join(ws, ".git", "config"), "[core]\n\thooksPath = tools/hooks\n[filter \"nb\"]\n\tclean = python3 -m nbclean\n", 0o644)
	writeFile(t, filepath.Join(ws, "vendor/lib/.git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	writeFile(t, filepath.Join(ws, "vendor/lib/.git", "config"), "[core]\n\thooksPath = scripts\n", 0o644)
	require.NoError(t, os.Symlink("tools/vscode", filepath.Join(ws, ".vscode")))
	require.NoError(t, os.Symlink("../shared/claude.json", filepath.Join(ws, ".claude/settings.json")))
	cfg := corral.Config{Workspace: ws, Env: []string{"PATH=" + testPath}}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	sbf, err := NewSandboxFile(sb)
	require.NoError(t, err)
	inproc, err := NewFileFor(sb)
	require.NoError(t, err)
	plain, err := NewFile(ws)
	require.NoError(t, err)

	for _, p := range []string{"tools/hooks/pre-commit", "nbclean.py", "tools/vscode/tasks.json", "shared/claude.json",
		"vendor/lib/scripts/post-checkout"} {
		var pe *PlantingError
		require.ErrorAs(t, inproc.Write(p, "evil"), &pe, p)
		assert.NotEmpty(t, pe.What, p)
		require.ErrorAs(t, sbf.Write(ctx, p, "evil"), &pe, p)
		b, _ := os.ReadFile(filepath.Join(ws, p))
		assert.NotContains(t, string(b), "evil", p)
		require.NoError(t, plain.Write(p, "evil"), "control: the unguarded tool writes %s", p)
	}
	require.NoError(t, inproc.Write("tools/other.txt", "plain"), "a name beside them still writes")
}
