package cli

import (
	"archive/tar"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/changeset"
)

// plantedArchive is an archive crafted to plant what runs code on the
// host: a pre-commit hook, an fsmonitor in the repository's config, a
// direnv file, an editor's folder-open task; and one ordinary change.
// Each planted program touches a file in marks.
func plantedArchive(t *testing.T, marks string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	entry := func(name string, mode int64, content string) {
		typ := byte(tar.TypeReg)
		if strings.HasSuffix(name, "/") {
			typ = tar.TypeDir
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: int64(len(content))}))
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
	}
	entry(".git/", 0o755, "")
	entry(".git/hooks/", 0o755, "")
	entry(".git/hooks/pre-commit", 0o755, "#!/bin/sh\ntouch "+marks+"/hook\n")
	entry(".git/config", 0o644, "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tfsmonitor = "+marks+"/fsmonitor.sh\n")
	entry(".envrc", 0o644, "touch "+marks+"/envrc\n")
	entry(".vscode/", 0o755, "")
	entry(".vscode/tasks.json", 0o644, `{"version":"2.0.0","tasks":[{"label":"x","command":"touch `+marks+`/vscode","runOptions":{"runOn":"folderOpen"}}]}`)
	entry("README.md", 0o644, "changed\n")
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// hostRepo makes a repository with one commit, as the host's worktree.
func hostRepo(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("hello\n"), 0o644))
	gitRun(t, ws, "init", "-q", "-b", "main")
	gitRun(t, ws, "add", ".")
	gitRun(t, ws, "commit", "-q", "-m", "first")
	return ws
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// commitOnHost commits the worktree's changes as its owner would, with
// the repository's hooks and config, and reports which planted programs
// ran.
func commitOnHost(t *testing.T, ws, marks string) []string {
	t.Helper()
	fsmon := filepath.Join(marks, "fsmonitor.sh")
	require.NoError(t, os.WriteFile(fsmon, []byte("#!/bin/sh\ntouch "+marks+"/fsmonitor\n"), 0o755))
	gitRun(t, ws, "add", "README.md")
	gitRun(t, ws, "commit", "-q", "-m", "second")
	var ran []string
	for _, m := range []string{"hook", "fsmonitor"} {
		if _, err := os.Stat(filepath.Join(marks, m)); err == nil {
			ran = append(ran, m)
		}
	}
	return ran
}

// TestChangesApplyPlanted: an imported archive plants nothing through
// apply. Control: the same archive applied with the guard switched off
// (every protected entry allowed) plants a hook and an fsmonitor that the
// next `git commit` on the host runs.
func TestChangesApplyPlanted(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Run("control: without the guard", func(t *testing.T) {
		ws, marks := hostRepo(t), t.TempDir()
		dir := filepath.Join(t.TempDir(), "cs")
		cs, err := changeset.Import(dir, ws, bytes.NewReader(plantedArchive(t, marks)), changeset.ImportOptions{})
		require.NoError(t, err)
		_, err = cs.Apply(changeset.ApplyOptions{AllowPlanting: []string{".git", ".envrc", ".vscode"}})
		require.NoError(t, err)
		assert.FileExists(t, filepath.Join(ws, ".envrc"))
		assert.Equal(t, []string{"hook", "fsmonitor"}, commitOnHost(t, ws, marks))
	})

	ws, marks := hostRepo(t), t.TempDir()
	tarball := filepath.Join(t.TempDir(), "planted.tar")
	require.NoError(t, os.WriteFile(tarball, plantedArchive(t, marks), 0o644))
	dir := filepath.Join(t.TempDir(), "cs")
	_, errOut, code := corralCmd(t, "", "changes", "import", dir, "-i", tarball, "--workspace", ws)
	require.Equal(t, 0, code, errOut)

	// Review shows the protected entries first, marked.
	out, errOut, code := corralCmd(t, "", "changes", "list", dir)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NotEmpty(t, lines)
	assert.True(t, strings.HasPrefix(lines[0], "! "), out)
	assert.Equal(t, "M README.md (8 bytes, was 6 bytes)", lines[len(lines)-1], out)
	assert.Contains(t, out, "! A .envrc (")
	assert.Contains(t, out, "[protected: direnv: run on entering the directory]")
	_, errOut, code = corralCmd(t, "", "changes", "diff", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "! A .vscode/tasks.json")

	out, errOut, code = corralCmd(t, "", "changes", "apply", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "applied 1 change(s)")
	assert.Contains(t, out, "guarded 5 change(s) to protected entries")
	assert.Contains(t, errOut, "corral: held "+filepath.Join(ws, ".envrc")+": held in "+filepath.Join(ws, ".corral-held"))
	assert.Contains(t, errOut, "corral: held "+filepath.Join(ws, ".vscode")+": held in ")
	assert.Contains(t, errOut, "corral: dropped "+filepath.Join(ws, ".git/hooks")+": not an allowed directory")
	assert.Contains(t, errOut, "corral: dropped "+filepath.Join(ws, ".git/config")+": changes keys that are not allowed: core.fsmonitor")

	b, err := os.ReadFile(filepath.Join(ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "changed\n", string(b))
	assert.NoFileExists(t, filepath.Join(ws, ".envrc"))
	assert.NoFileExists(t, filepath.Join(ws, ".git/hooks/pre-commit"))
	assert.NoDirExists(t, filepath.Join(ws, ".vscode"))
	assert.Empty(t, commitOnHost(t, ws, marks), "the host's git runs no planted program")
}

// TestChangesApplyProtect: a name given with --protect is held like a
// listed one.
func TestChangesApplyProtect(t *testing.T) {
	ws, dir := pending(t)
	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(cs.Roots()[0].Upper, "justfile"), []byte("x\n"), 0o644))
	_, errOut, code := corralCmd(t, "", "changes", "apply", "--protect", "justfile", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "corral: held "+filepath.Join(ws, "justfile")+": held in ")
	assert.NoFileExists(t, filepath.Join(ws, "justfile"))
	assert.FileExists(t, filepath.Join(ws, "new"))
}
