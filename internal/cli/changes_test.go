package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/changeset"
)

// corralCmd runs the CLI in-process and returns its output and exit status.
func corralCmd(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := newRootCmd(nil)
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
		if ee.msg != "" {
			errOut.WriteString("corral: " + ee.msg + "\n")
		}
	default:
		code = exitUsage
		errOut.WriteString("corral: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), code
}

// pending makes a workspace and a changeset over it with a modified, an
// added and a deleted file, as a sandbox would leave it.
func pending(t *testing.T) (ws, dir string) {
	t.Helper()
	base := t.TempDir()
	ws = filepath.Join(base, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "old"), []byte("old\n"), 0o644))
	dir = filepath.Join(base, "cs")
	cs, err := changeset.Create(dir, ws)
	require.NoError(t, err)
	up := cs.Roots()[0].Upper
	require.NoError(t, os.WriteFile(filepath.Join(up, "a.txt"), []byte("hello\nworld\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(up, "new"), []byte("n\n"), 0o644))
	require.NoError(t, unix.Mknod(filepath.Join(up, "old"), unix.S_IFCHR, 0))
	return ws, dir
}

func TestChangesList(t *testing.T) {
	ws, dir := pending(t)
	out, _, code := corralCmd(t, "", "changes", "list", dir)
	assert.Equal(t, 0, code)
	assert.Equal(t, "M a.txt (12 bytes, was 6 bytes)\nA new (2 bytes)\nD old (was 4 bytes)\n", out)

	out, _, code = corralCmd(t, "", "changes", "list", "--json", dir)
	assert.Equal(t, 0, code)
	var changes []changeset.Change
	require.NoError(t, json.Unmarshal([]byte(out), &changes))
	require.Len(t, changes, 3)
	assert.Equal(t, changeset.Change{Root: ws, Path: "new", Status: changeset.Added, Type: changeset.File, Size: 2, Mode: 0o644}, changes[1])
}

func TestChangesListEmptyJSON(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(t.TempDir(), "cs")
	_, err := changeset.Create(dir, ws)
	require.NoError(t, err)
	out, _, code := corralCmd(t, "", "changes", "list", "--json", dir)
	assert.Equal(t, 0, code)
	assert.Equal(t, "[]\n", out)
}

func TestChangesDiff(t *testing.T) {
	_, dir := pending(t)
	out, _, code := corralCmd(t, "", "changes", "diff", dir)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n hello\n+world\n")
	assert.Contains(t, out, "deleted file mode 100644\n--- a/old\n+++ /dev/null\n")
}

func TestChangesApply(t *testing.T) {
	ws, dir := pending(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "new"), []byte("host\n"), 0o644))
	_, errOut, code := corralCmd(t, "", "changes", "apply", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "nothing applied")
	assert.Contains(t, errOut, "  new (created on the host)\n")

	require.NoError(t, os.Remove(filepath.Join(ws, "new")))
	out, _, code := corralCmd(t, "", "changes", "apply", dir)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "applied 3 change(s) to ")
	b, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\nworld\n", string(b))
	_, err = os.Stat(filepath.Join(ws, "old"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestChangesApplyForce(t *testing.T) {
	ws, dir := pending(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "new"), []byte("host\n"), 0o644))
	_, _, code := corralCmd(t, "", "changes", "apply", "--force", dir)
	assert.Equal(t, 0, code)
	b, err := os.ReadFile(filepath.Join(ws, "new"))
	require.NoError(t, err)
	assert.Equal(t, "n\n", string(b))
}

func TestChangesExportImportDiscard(t *testing.T) {
	ws, dir := pending(t)
	tarball := filepath.Join(t.TempDir(), "changes.tar")
	_, _, code := corralCmd(t, "", "changes", "export", dir, "-o", tarball)
	require.Equal(t, 0, code)

	copyWs := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(copyWs, os.DirFS(ws)))
	imported := filepath.Join(t.TempDir(), "imported")
	_, errOut, code := corralCmd(t, "", "changes", "import", imported, "-i", tarball, "--workspace", copyWs)
	require.Equal(t, 0, code, errOut)
	want, _, _ := corralCmd(t, "", "changes", "list", dir)
	got, _, _ := corralCmd(t, "", "changes", "list", imported)
	assert.Equal(t, want, got)

	_, _, code = corralCmd(t, "", "changes", "discard", dir)
	assert.Equal(t, 0, code)
	_, err := os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestChangesErrors(t *testing.T) {
	notCs := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not a changeset", []string{"changes", "list", notCs}, 1, "not a changeset"},
		{"missing", []string{"changes", "diff", filepath.Join(notCs, "nope")}, 1, "no such file"},
		{"no directory", []string{"changes", "apply"}, exitUsage, "accepts 1 arg"},
		{"export without -o", []string{"changes", "export", notCs}, exitUsage, `"output" not set`},
		{"discard refuses a plain directory", []string{"changes", "discard", notCs}, 1, "not a changeset"},
		{"unknown subcommand", []string{"changes", "lsit", notCs}, exitUsage, `unknown command "lsit" for "corral changes"`},
		{"review without changeset", []string{"run", "--review", "--", "true"}, exitUsage, "--review needs --changeset"},
		{"changeset-writable without changeset", []string{"run", "--changeset-writable", notCs, "--", "true"}, exitUsage, "--changeset-writable needs --changeset"},
		{"import with a bad --root", []string{"changes", "import", notCs, "-i", "-", "--root", "/a"}, exitUsage, `--root "/a": want FROM=TO`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := corralCmd(t, "", tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, errOut, tt.want)
		})
	}
	_, err := os.Stat(notCs)
	assert.NoError(t, err, "discard left a directory that is not a changeset alone")
}

func TestProfileChangeset(t *testing.T) {
	ws := workspace(t)
	dir := filepath.Join(t.TempDir(), "cs")
	out, errOut, code := cli(t, ws, "profile", "--platform", "linux", "--changeset", dir, "--review")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "overlay  "+ws+" (changes in "+filepath.Join(dir, "roots", "0", "upper")+")")
	assert.Contains(t, out, "  overlayfs          workspace writes kept in the changeset")
	_, err := os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist, "profile creates nothing")

	_, errOut, code = cli(t, ws, "profile", "--platform", "darwin", "--changeset", dir)
	assert.Equal(t, exitSetup, code)
	assertOneLine(t, errOut, "--changeset needs overlayfs")
}

// pendingRoots makes a changeset over a workspace and a second directory
// with a change in each, as a sandbox would leave it.
func pendingRoots(t *testing.T) (ws, extra, dir string) {
	t.Helper()
	base := t.TempDir()
	ws, extra = filepath.Join(base, "ws"), filepath.Join(base, "extra")
	for _, d := range []string{ws, extra} {
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "a.txt"), []byte("hello\n"), 0o644))
	}
	dir = filepath.Join(base, "cs")
	cs, err := changeset.Create(dir, ws, extra)
	require.NoError(t, err)
	roots := cs.Roots()
	require.NoError(t, os.WriteFile(filepath.Join(roots[0].Upper, "new"), []byte("n\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(roots[1].Upper, "a.txt"), []byte("hello\nworld\n"), 0o644))
	return ws, extra, dir
}

func TestChangesRoots(t *testing.T) {
	ws, extra, dir := pendingRoots(t)
	out, _, code := corralCmd(t, "", "changes", "list", dir)
	assert.Equal(t, 0, code)
	assert.Equal(t, ws+":\n  A new (2 bytes)\n"+extra+":\n  M a.txt (12 bytes, was 6 bytes)\n", out, "each root heads its changes")

	out, _, code = corralCmd(t, "", "changes", "diff", dir)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "--- a"+extra+"/a.txt\n+++ b"+extra+"/a.txt\n")
	assert.Contains(t, out, "+++ b"+ws+"/new\n")

	tarball := filepath.Join(t.TempDir(), "changes.tar")
	_, _, code = corralCmd(t, "", "changes", "export", dir, "-o", tarball)
	require.Equal(t, 0, code)

	// A conflict in the second root: nothing applied, the file named under
	// its root.
	require.NoError(t, os.WriteFile(filepath.Join(extra, "a.txt"), []byte("host\n"), 0o644))
	_, errOut, code := corralCmd(t, "", "changes", "apply", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "nothing applied: 1 original(s) in "+ws+", "+extra+" changed")
	assert.Contains(t, errOut, "  "+extra+":\n    a.txt (changed on the host)\n")
	_, err := os.Stat(filepath.Join(ws, "new"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the first root is untouched too")

	// The archive replays elsewhere, its second root mapped by --root.
	copies := []string{filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "extra")}
	for _, d := range copies {
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "a.txt"), []byte("hello\n"), 0o644))
	}
	imported := filepath.Join(t.TempDir(), "imported")
	_, errOut, code = corralCmd(t, "", "changes", "import", imported, "-i", tarball, "--workspace", copies[0], "--root", extra+"="+copies[1])
	require.Equal(t, 0, code, errOut)
	out, _, code = corralCmd(t, "", "changes", "apply", imported)
	assert.Equal(t, 0, code)
	assert.Equal(t, "applied 2 change(s) to "+copies[0]+", "+copies[1]+"\n  "+copies[0]+":\n    A new (2 bytes)\n  "+
		copies[1]+":\n    M a.txt (12 bytes, was 6 bytes)\n", out)
	b, err := os.ReadFile(filepath.Join(copies[1], "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\nworld\n", string(b))

	_, errOut, code = corralCmd(t, "", "changes", "import", filepath.Join(t.TempDir(), "cs"), "-i", tarball,
		"--workspace", copies[0], "--root", "/elsewhere="+copies[1])
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no directory /elsewhere to map")
}

func TestRunChangesetWritable(t *testing.T) {
	needsSandbox(t)
	ws, extra := workspace(t), workspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(extra, "conf"), []byte("1\n"), 0o644))
	dir := filepath.Join(t.TempDir(), "cs")
	_, errOut, code := cli(t, ws, "run", "--changeset", dir, "--changeset-writable", extra, "--",
		"sh", "-c", "echo w > in-ws && echo 2 > "+extra+"/conf")
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(filepath.Join(extra, "conf"))
	require.NoError(t, err)
	assert.Equal(t, "1\n", string(b), "the extra root is untouched")

	out, _, code := corralCmd(t, "", "changes", "list", dir)
	assert.Equal(t, 0, code)
	assert.Equal(t, ws+":\n  A in-ws (2 bytes)\n"+extra+":\n  M conf (2 bytes, was 2 bytes)\n", out)

	// A later run must name the same directories.
	_, errOut, code = cli(t, ws, "run", "--changeset", dir, "--", "true")
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, errOut, "a changeset keeps the directories it began with")
	out, errOut, code = cli(t, ws, "run", "--changeset", dir, "--changeset-writable", extra, "--", "cat", extra+"/conf")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "2\n", out, "the second run continues the changeset in both roots")
}

func TestProfileChangesetWritable(t *testing.T) {
	ws, extra := workspace(t), workspace(t)
	dir := filepath.Join(t.TempDir(), "cs")
	out, errOut, code := cli(t, ws, "profile", "--platform", "linux", "--changeset", dir, "--changeset-writable", extra)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "overlay  "+ws+" (changes in "+filepath.Join(dir, "roots", "0", "upper")+")")
	assert.Contains(t, out, "overlay  "+extra+" (changes in "+filepath.Join(dir, "roots", "1", "upper")+")")
}
