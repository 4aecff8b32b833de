package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/changeset"
)

// hostilePending is a changeset whose command chose names, a symlink target
// and file contents to mislead the reviewer.
func hostilePending(t *testing.T) (ws, dir string) {
	t.Helper()
	ws, dir = pending(t)
	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	up := cs.Roots()[0].Upper
	files := map[string]string{
		"x\nM README.md (5 bytes, was 5 bytes)": "forged\n",
		"cr\rM README.md":                       "x\n",
		"esc\x1b[2K\x1b[1A":                     "x\n",
		"tab\tname":                             "x\n",
		"bad\xffname":                           "x\n",
		"-rf":                                   "x\n",
		"a.txt":                                 "hello\n\x1b[2K\x1b[1Aall good\nevil\rgood\n\x1b]8;;http://evil.example\x07docs\x1b]8;;\x07\n",
		"late.bin":                              strings.Repeat("text\n", 5000) + "\x00",
	}
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(up, name), []byte(content), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(up, "tool"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.Symlink("\nA evil", filepath.Join(up, "link")))
	return ws, dir
}

// assertSafe checks that output shows no forged line and nothing a
// terminal would act on.
func assertSafe(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		for _, forged := range []string{"M README.md", "A evil", "  M README.md", "  A evil"} {
			assert.False(t, strings.HasPrefix(line, forged), "forged line %q", line)
		}
	}
	for _, c := range []string{"\x1b", "\r", "\x07", "\xff"} {
		assert.NotContains(t, out, c)
	}
}

func TestChangesListHostile(t *testing.T) {
	_, dir := hostilePending(t)
	out, errOut, code := corralCmd(t, "", "changes", "list", dir)
	require.Equal(t, 0, code, errOut)
	assertSafe(t, out)
	for _, want := range []string{
		`A "x\nM README.md (5 bytes, was 5 bytes)" (7 bytes)`,
		`A "cr\rM README.md" (2 bytes)`,
		`A "esc\033[2K\033[1A" (2 bytes)`,
		`A "tab\tname" (2 bytes)`,
		`A "bad\377name" (2 bytes)`,
		"A -rf (2 bytes)\n",
		`A link (→ "\nA evil")`,
		"A tool (10 bytes) [executable]",
		"A late.bin (25001 bytes) [binary]",
		"M a.txt (69 bytes, was 6 bytes) [control characters]",
	} {
		assert.Contains(t, out, want)
	}

	// JSON keeps the exact names: it escapes them itself.
	out, errOut, code = corralCmd(t, "", "changes", "list", "--json", dir)
	require.Equal(t, 0, code, errOut)
	assertSafe(t, out)
	var changes []changeset.Change
	require.NoError(t, json.Unmarshal([]byte(out), &changes))
	names := map[string]bool{}
	for _, ch := range changes {
		names[ch.Path] = true
	}
	for _, n := range []string{"x\nM README.md (5 bytes, was 5 bytes)", "cr\rM README.md", "esc\x1b[2K\x1b[1A", "-rf"} {
		assert.True(t, names[n], "%q in JSON", n)
	}
}

func TestChangesDiffHostile(t *testing.T) {
	_, dir := hostilePending(t)
	out, errOut, code := corralCmd(t, "", "changes", "diff", dir)
	require.Equal(t, 0, code, errOut)
	assertSafe(t, out)
	for _, want := range []string{
		`diff --git "a/x\nM README.md (5 bytes, was 5 bytes)" "b/x\nM README.md (5 bytes, was 5 bytes)"`,
		"+^[[2K^[[1Aall good\n",
		"+evil^Mgood\n",
		"+^[]8;;http://evil.example^Gdocs^[]8;;^G\n",
		"Binary files /dev/null and b/late.bin differ",
	} {
		assert.Contains(t, out, want)
	}
}

func TestReviewHostile(t *testing.T) {
	_, dir := hostilePending(t)
	var out strings.Builder
	require.NoError(t, review(strings.NewReader("r\nd\n"), &out, dir))
	assertSafe(t, out.String())
	assert.Contains(t, out.String(), `A "x\nM README.md (5 bytes, was 5 bytes)"`)
	assert.Contains(t, out.String(), "+evil^Mgood")
}

// TestChangesImportUnmappedRoot: an archive naming a directory besides the
// workspace is refused unless --root names it; given --root, the same
// archive's change is applied there, which shows what the refusal prevents.
func TestChangesImportUnmappedRoot(t *testing.T) {
	_, extra, dir := pendingRoots(t)
	tarball := filepath.Join(t.TempDir(), "changes.tar")
	_, errOut, code := corralCmd(t, "", "changes", "export", dir, "-o", tarball)
	require.Equal(t, 0, code, errOut)

	ws := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	imported := filepath.Join(t.TempDir(), "imported")
	_, errOut, code = corralCmd(t, "", "changes", "import", imported, "-i", tarball, "--workspace", ws)
	assert.Equal(t, 1, code)
	assert.Equal(t, "corral: the archive also records changes to "+extra+": nothing imported; to accept them give --root "+
		extra+"="+"DIR\n", errOut)
	_, err := os.Stat(imported)
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, errOut, code = corralCmd(t, "", "changes", "import", imported, "-i", tarball, "--workspace", ws, "--root", extra+"="+extra)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = corralCmd(t, "", "changes", "apply", imported)
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(filepath.Join(extra, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\nworld\n", string(b))
}
