package changeset_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/internal/childcover"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// These tests run real sandboxes over changesets, as root and (through
// make test-unprivileged) as an ordinary user.

func TestMain(m *testing.M) {
	if childcover.Init(corral.Init) {
		return
	}
	os.Exit(m.Run())
}

// workspace makes a directory with a few files of each kind.
func workspace(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	files := map[string]string{
		"a.txt":                 "hello\n",
		"d/x":                   "x\n",
		"d/y":                   "y\n",
		"e/deep/z":              "z\n",
		"bin":                   "bin\x00ary",
		"exec.sh":               "#!/bin/sh\n",
		".git/hooks/pre-commit": "#!/bin/sh\n",
	}
	for name, content := range files {
		p := filepath.Join(ws, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.Chmod(filepath.Join(ws, "exec.sh"), 0o755))
	require.NoError(t, os.Symlink("a.txt", filepath.Join(ws, "link")))
	return ws
}

func sandbox(t *testing.T, cfg corral.Config) *corral.Sandbox {
	t.Helper()
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return sb
}

func run(t *testing.T, sb *corral.Sandbox, script string) string {
	t.Helper()
	out, err := sb.Command(context.Background(), "sh", "-c", script).CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

// snapshot records every path of a tree with its mode and content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		fi, err := d.Info()
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.IsDir():
			snap[rel] = fi.Mode().String()
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			snap[rel] = "-> " + target
		default:
			b, _ := os.ReadFile(p)
			snap[rel] = fi.Mode().String() + " " + string(b)
		}
		return nil
	}))
	return snap
}

const editScript = `set -e
echo new > new.txt
echo more >> a.txt
rm d/x
mv d/y d/moved
rm -rf e; mkdir e; echo fresh > e/f
ln -sfn d/moved link
printf 'bin\001ary' > bin
chmod 700 exec.sh
mkdir -p nd/deeper; echo deep > nd/deeper/file
`

func TestSandboxChangeset(t *testing.T) {
	ws := workspace(t)
	dir := filepath.Join(t.TempDir(), "cs")
	before := snapshot(t, ws)

	// Without a changeset the edits land in the workspace: the probe works.
	plain := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.CopyFS(plain, os.DirFS(ws)))
	run(t, sandbox(t, corral.Config{Workspace: plain}), editScript)
	assert.NotEqual(t, before, snapshot(t, plain))

	sb := sandbox(t, corral.Config{Workspace: ws, Changeset: dir})
	run(t, sb, editScript)
	assert.Equal(t, before, snapshot(t, ws), "the workspace is untouched")

	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	changes, err := cs.List()
	require.NoError(t, err)
	assert.Equal(t, []string{
		"M a.txt", "M bin", "A d/moved", "D d/x", "D d/y",
		"R e/", "D e/deep/", "D e/deep/z", "A e/f",
		"M exec.sh", "M link", "A nd/", "A nd/deeper/", "A nd/deeper/file", "A new.txt",
	}, summaries(changes))

	// A second sandbox on the same changeset sees the first one's changes.
	out := run(t, sandbox(t, corral.Config{Workspace: ws, Changeset: dir}),
		"cat new.txt e/f; readlink link; test ! -e d/x && echo gone")
	assert.Equal(t, "new\nfresh\nd/moved\ngone\n", out)

	res, err := cs.Apply(changeset.ApplyOptions{})
	require.NoError(t, err)
	assert.Len(t, res.Applied, len(changes))
	assert.Equal(t, snapshot(t, plain), snapshot(t, ws), "applied, the workspace is as if written directly")
	fi, err := os.Stat(filepath.Join(ws, "exec.sh"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm())
}

func summaries(changes []changeset.Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.String()
	}
	return out
}

func TestSandboxChangesetConflict(t *testing.T) {
	ws := workspace(t)
	dir := filepath.Join(t.TempDir(), "cs")
	run(t, sandbox(t, corral.Config{Workspace: ws, Changeset: dir}), "echo sandbox >> a.txt; echo n > new")
	changeset.AfterTick(t, filepath.Join(ws, "a.txt"))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("host\n"), 0o644))
	before := snapshot(t, ws)

	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	_, err = cs.Apply(changeset.ApplyOptions{})
	var ce *changeset.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, []changeset.Conflict{{Root: ws, Path: "a.txt", Reason: "changed on the host"}}, ce.Conflicts)
	assert.Equal(t, before, snapshot(t, ws), "nothing applied")
}

func TestSandboxChangesetInUse(t *testing.T) {
	ws := workspace(t)
	dir := filepath.Join(t.TempDir(), "cs")
	sb := sandbox(t, corral.Config{Workspace: ws, Changeset: dir})
	first := sb.Command(context.Background(), "sh", "-c", "echo 1 > one; read line; exit 0")
	r, stdin, err := os.Pipe()
	require.NoError(t, err)
	first.Stdin = r
	require.NoError(t, first.Start())
	r.Close()

	err = sb.Command(context.Background(), "true").Run()
	var se *corral.SetupError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, corral.LayerOverlay, se.Layer)
	assert.ErrorIs(t, err, changeset.ErrInUse)
	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	_, err = cs.Apply(changeset.ApplyOptions{})
	assert.ErrorIs(t, err, changeset.ErrInUse)

	stdin.Close()
	require.NoError(t, first.Wait())
	out := run(t, sb, "cat one")
	assert.Equal(t, "1\n", out)
	_, err = cs.Apply(changeset.ApplyOptions{})
	assert.NoError(t, err)
}

// TestSandboxOverlayFails proves that a changeset that cannot be mounted
// stops the command instead of letting it write to the real files.
func TestSandboxOverlayFails(t *testing.T) {
	ws := workspace(t)
	dir := filepath.Join(t.TempDir(), "cs")
	sb := sandbox(t, corral.Config{Workspace: ws, Changeset: dir})
	const write = "echo leaked > a.txt"
	run(t, sb, write) // as made, the changeset mounts and takes the write

	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	require.NoError(t, cs.Discard())
	r := cs.Roots()[0]
	require.NoError(t, os.MkdirAll(r.Upper, 0o755))
	require.NoError(t, os.WriteFile(r.Work, nil, 0o600)) // no work directory
	before := snapshot(t, ws)

	err = sb.Command(context.Background(), "sh", "-c", write).Run()
	var se *corral.SetupError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, corral.LayerOverlay, se.Layer)
	assert.Equal(t, ws, se.Path)
	assert.Equal(t, before, snapshot(t, ws))
}

func TestSandboxChangesetProtects(t *testing.T) {
	ws := workspace(t)
	dir := filepath.Join(t.TempDir(), "cs")
	sub := filepath.Join(ws, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	sb := sandbox(t, corral.Config{Workspace: ws, Changeset: dir, WritablePaths: []string{sub}})

	// .git is staged inside the overlay too: a hook never reaches the
	// changeset, a ref does.
	c := sb.Command(context.Background(), "sh", "-c", "echo x > .git/hooks/evil && mkdir -p .git/refs/heads && echo x > .git/refs/heads/x")
	require.NoError(t, c.Run())
	require.Len(t, c.Dropped(), 1)
	assert.Contains(t, c.Dropped()[0], ".git/hooks")
	// A writable path inside the workspace is written through the overlay.
	run(t, sb, "echo s > sub/file")
	_, err := os.Stat(filepath.Join(sub, "file"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	changes, err := cs.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"A .git/refs/", "A .git/refs/heads/", "A .git/refs/heads/x", "A sub/file"}, summaries(changes))
}

func TestSandboxChangesetConfig(t *testing.T) {
	ws := workspace(t)
	other := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "cs")
	_, err := changeset.Create(elsewhere, other)
	require.NoError(t, err)
	tests := []struct {
		name string
		cfg  corral.Config
		want string
	}{
		{"inside the workspace", corral.Config{Workspace: ws, Changeset: filepath.Join(ws, "cs")}, "inside the writable path"},
		{"inside a writable path", corral.Config{Workspace: ws, WritablePaths: []string{other}, Changeset: filepath.Join(other, "cs")}, "inside the writable path"},
		{"around the workspace", corral.Config{Workspace: ws, Changeset: filepath.Dir(ws)}, "contains the writable path"},
		{"sandbox disabled", corral.Config{Workspace: ws, Mode: corral.ModeDisabled, Changeset: elsewhere}, "needs Mode enabled"},
		{"another workspace's", corral.Config{Workspace: ws, Changeset: elsewhere}, "not to the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := corral.New(tt.cfg)
			var ce *corral.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "Changeset", ce.Field)
			assert.Contains(t, err.Error(), tt.want)
			_, err = os.Stat(filepath.Join(ws, "cs"))
			assert.ErrorIs(t, err, fs.ErrNotExist, "nothing made in the workspace")
		})
	}
}

func TestSandboxChangesetStrangeNames(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, `ws, with:odd\chars`)
	require.NoError(t, os.Mkdir(ws, 0o755))
	dir := filepath.Join(base, `cs,upper=x:y\z`)
	run(t, sandbox(t, corral.Config{Workspace: ws, Changeset: dir}), "echo ok > f")
	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	changes, err := cs.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"A f"}, summaries(changes))
}

// TestSandboxOverlayOnlyWhileRunning checks that no sandbox is built ahead
// with the overlay mounted: a mount beside the running one, or one that
// outlives an Apply, would see the layers change beneath it.
func TestSandboxOverlayOnlyWhileRunning(t *testing.T) {
	ws := workspace(t)
	token := fmt.Sprintf("cs-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := filepath.Join(t.TempDir(), token)
	sb := sandbox(t, corral.Config{Workspace: ws, Changeset: dir}) // through the spawner

	first := sb.Command(context.Background(), "sh", "-c", "read line; exit 0")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	first.Stdin = r
	require.NoError(t, first.Start())
	r.Close()
	assert.Equal(t, 1, overlayMounts(t, token), "the running command's overlay is found")
	w.Close()
	require.NoError(t, first.Wait())

	second := sb.Command(context.Background(), "true")
	require.NoError(t, second.Run())
	require.NoError(t, sb.Warm(context.Background()), "a sandbox built ahead, if one were, is built by now")
	// The inits that ran them may linger while their namespaces are torn
	// down.
	waitExited(t, first.Process.Pid)
	waitExited(t, second.Process.Pid)
	assert.Zero(t, overlayMounts(t, token))
}

// overlayMounts counts the mount namespaces, among this user's processes,
// that hold an overlay with token in its options.
func overlayMounts(t *testing.T, token string) int {
	t.Helper()
	namespaces := map[string]bool{}
	infos, err := filepath.Glob("/proc/[0-9]*/mountinfo")
	require.NoError(t, err)
	for _, p := range infos {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(" - overlay ")) || !bytes.Contains(b, []byte(token)) {
			continue
		}
		if ns, err := os.Readlink(filepath.Join(filepath.Dir(p), "ns", "mnt")); err == nil {
			namespaces[ns] = true
		}
	}
	return len(namespaces)
}

// extraRoot makes a writable directory outside the workspace.
func extraRoot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "extra")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "data"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "conf.toml"), []byte("x = 1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data", "old"), []byte("old\n"), 0o644))
	return dir
}

// rootsScript edits the workspace (the current directory) and the extra
// root, and writes to a writable path that is not overlaid.
func rootsScript(extra, direct string) string {
	return fmt.Sprintf(`set -e
echo new > new.txt
echo more >> a.txt
echo 'x = 2' > %[1]s/conf.toml
rm %[1]s/data/old
echo n > %[1]s/data/new
echo d > %[2]s/direct
`, extra, direct)
}

func TestSandboxChangesetRoots(t *testing.T) {
	ws, extra, direct := workspace(t), extraRoot(t), t.TempDir()
	dir := filepath.Join(t.TempDir(), "cs")
	before := []map[string]string{snapshot(t, ws), snapshot(t, extra)}

	// Without ChangesetPaths the extra root is written directly: the
	// probe works.
	plainWs, plainExtra := t.TempDir(), extraRoot(t)
	require.NoError(t, os.CopyFS(plainWs, os.DirFS(ws)))
	run(t, sandbox(t, corral.Config{Workspace: plainWs, WritablePaths: []string{plainExtra, direct}, Changeset: filepath.Join(t.TempDir(), "cs")}),
		rootsScript(plainExtra, direct))
	assert.NotEqual(t, before[1], snapshot(t, plainExtra))

	cfg := corral.Config{Workspace: ws, WritablePaths: []string{extra, direct}, ChangesetPaths: []string{extra}, Changeset: dir}
	run(t, sandbox(t, cfg), rootsScript(extra, direct))
	assert.Equal(t, before, []map[string]string{snapshot(t, ws), snapshot(t, extra)}, "both roots untouched")
	_, err := os.Stat(filepath.Join(direct, "direct"))
	assert.NoError(t, err, "a writable path not overlaid is written directly")

	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{ws, extra}, cs.RootPaths())
	changes, err := cs.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"M a.txt", "A new.txt", "M conf.toml", "A data/new", "D data/old"}, summaries(changes))
	var diff bytes.Buffer
	require.NoError(t, cs.Diff(&diff))
	assert.Contains(t, diff.String(), "+++ b"+extra+"/conf.toml\n")
	assert.Contains(t, diff.String(), "+++ b"+ws+"/new.txt\n")

	// A second sandbox on the changeset sees both roots' changes and adds
	// to them.
	out := run(t, sandbox(t, cfg), fmt.Sprintf("cat new.txt %[1]s/conf.toml; test ! -e %[1]s/data/old && echo gone; echo again >> %[1]s/data/new", extra))
	assert.Equal(t, "new\nx = 2\ngone\n", out)

	var archive bytes.Buffer
	require.NoError(t, cs.Export(&archive))

	// A conflict in the second root keeps the first root's changes out too.
	changeset.AfterTick(t, filepath.Join(extra, "conf.toml"))
	require.NoError(t, os.WriteFile(filepath.Join(extra, "conf.toml"), []byte("x = 9\n"), 0o644))
	hostEdited := []map[string]string{snapshot(t, ws), snapshot(t, extra)}
	_, err = cs.Apply(changeset.ApplyOptions{})
	var ce *changeset.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, []changeset.Conflict{{Root: extra, Path: "conf.toml", Reason: "changed on the host"}}, ce.Conflicts)
	assert.Equal(t, hostEdited, []map[string]string{snapshot(t, ws), snapshot(t, extra)}, "nothing applied")

	res, err := cs.Apply(changeset.ApplyOptions{Force: true})
	require.NoError(t, err)
	assert.Len(t, res.Applied, len(changes))
	applied := []map[string]string{snapshot(t, ws), snapshot(t, extra)}
	assert.Equal(t, "-rw-r--r-- n\nagain\n", applied[1]["data/new"])
	_, gone := applied[1]["data/old"]
	assert.False(t, gone)

	// The archive replays both roots on copies of the originals.
	copies := []string{workspace(t), extraRoot(t)}
	imported, err := changeset.Import(filepath.Join(t.TempDir(), "imported"), copies[0], &archive,
		changeset.ImportOptions{Roots: map[string]string{extra: copies[1]}})
	require.NoError(t, err)
	_, err = imported.Apply(changeset.ApplyOptions{})
	require.NoError(t, err)
	assert.Equal(t, applied, []map[string]string{snapshot(t, copies[0]), snapshot(t, copies[1])})
}

// TestSandboxOverlayFailsInSecondRoot proves that when the second root's
// overlay cannot be mounted, the command does not start and the error names
// that root: neither root is written directly.
func TestSandboxOverlayFailsInSecondRoot(t *testing.T) {
	ws, extra := workspace(t), extraRoot(t)
	dir := filepath.Join(t.TempDir(), "cs")
	sb := sandbox(t, corral.Config{Workspace: ws, WritablePaths: []string{extra}, ChangesetPaths: []string{extra}, Changeset: dir})
	write := "echo leaked > a.txt; echo leaked > " + extra + "/conf.toml"
	run(t, sb, write) // as made, both overlays mount and take the writes

	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	r := cs.Roots()[1]
	require.NoError(t, os.RemoveAll(r.Work))
	require.NoError(t, os.WriteFile(r.Work, nil, 0o600)) // no work directory
	before := []map[string]string{snapshot(t, ws), snapshot(t, extra)}

	err = sb.Command(context.Background(), "sh", "-c", write).Run()
	var se *corral.SetupError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, corral.LayerOverlay, se.Layer)
	assert.Equal(t, extra, se.Path)
	assert.Equal(t, before, []map[string]string{snapshot(t, ws), snapshot(t, extra)})
}

func TestSandboxChangesetRootsConfig(t *testing.T) {
	ws, extra, other := workspace(t), extraRoot(t), t.TempDir()
	inside := filepath.Join(ws, "d")
	file := filepath.Join(other, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	withExtra := filepath.Join(t.TempDir(), "with-extra")
	_, err := changeset.Create(withExtra, ws, extra)
	require.NoError(t, err)
	wsOnly := filepath.Join(t.TempDir(), "ws-only")
	_, err = changeset.Create(wsOnly, ws)
	require.NoError(t, err)
	cs := filepath.Join(t.TempDir(), "cs")
	tests := []struct {
		name string
		cfg  corral.Config
		want string
	}{
		{"not writable", corral.Config{Workspace: ws, Changeset: cs, ChangesetPaths: []string{extra}}, "not one of WritablePaths"},
		{"no changeset", corral.Config{Workspace: ws, WritablePaths: []string{extra}, ChangesetPaths: []string{extra}}, "needs Changeset"},
		{"inside the workspace", corral.Config{Workspace: ws, Changeset: cs, WritablePaths: []string{inside}, ChangesetPaths: []string{inside}}, "lies inside the workspace"},
		{"around the workspace", corral.Config{Workspace: ws, Changeset: cs, WritablePaths: []string{filepath.Dir(ws)}, ChangesetPaths: []string{filepath.Dir(ws)}}, "contains the workspace"},
		{"a file", corral.Config{Workspace: ws, Changeset: cs, WritablePaths: []string{file}, ChangesetPaths: []string{file}}, "not a directory"},
		{"missing", corral.Config{Workspace: ws, Changeset: cs, WritablePaths: []string{extra}, ChangesetPaths: []string{filepath.Join(other, "nope")}}, "does not exist"},
		{"changeset began with another root", corral.Config{Workspace: ws, Changeset: withExtra}, "records changes to " + ws + ", " + extra + ", not to " + ws},
		{"changeset began without it", corral.Config{Workspace: ws, Changeset: wsOnly, WritablePaths: []string{extra}, ChangesetPaths: []string{extra}}, "a changeset keeps the directories it began with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := corral.New(tt.cfg)
			var ce *corral.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "ChangesetPaths", ce.Field)
			assert.Contains(t, err.Error(), tt.want)
			_, err = os.Stat(cs)
			assert.ErrorIs(t, err, fs.ErrNotExist, "no changeset made")
		})
	}
}
