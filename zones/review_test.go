package zones

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/changeset"
)

// upperWrite leaves in upper what overlayfs leaves when a command writes
// name.
func upperWrite(t *testing.T, upper, name, content string) {
	t.Helper()
	p := filepath.Join(upper, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// upperDelete leaves what overlayfs leaves when a command deletes name.
func upperDelete(t *testing.T, upper, name string) {
	t.Helper()
	p := filepath.Join(upper, name)
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, unix.Lsetxattr(p, "user.overlay.whiteout", nil, 0))
}

func paths(rs []Request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	slices.Sort(out)
	return out
}

func TestReview(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	mk := func(name string, files ...string) string {
		d := filepath.Join(base, name)
		require.NoError(t, os.Mkdir(d, 0o755))
		for _, f := range files {
			require.NoError(t, os.WriteFile(filepath.Join(d, f), []byte("old "+f+"\n"), 0o644))
		}
		return d
	}
	data, final := mk("data", "keep.txt", "gone.txt"), mk("final", "report.md", "old.md", "swap")
	a, err := Resolve([]Zone{
		{Name: "data", Path: data, Mode: ReadWrite, Approval: Approval{Write: Ask, Delete: PreApproved}},
		{Name: "final", Path: final, Mode: ReadWrite, Approval: Approval{Write: Ask, Delete: Blocked}},
	}, []Decl{{Name: "data", Mode: ReadWrite}, {Name: "final", Mode: ReadWrite}})
	require.NoError(t, err)
	cs, err := changeset.Create(filepath.Join(base, "cs"), data, final)
	require.NoError(t, err)
	up := map[string]string{}
	for _, r := range cs.Roots() {
		up[r.Path] = r.Upper
	}
	upperWrite(t, up[data], "keep.txt", "new keep\n")  // ask: approved
	upperWrite(t, up[data], "sub/evil.sh", "rm -rf\n") // ask: refused, and so its new directory
	upperDelete(t, up[data], "gone.txt")               // preApproved
	upperWrite(t, up[final], "report.md", "final\n")   // ask: approved
	upperDelete(t, up[final], "old.md")                // blocked
	upperWrite(t, up[final], "swap/in.md", "x\n")      // a file replaced by a directory: blocked, with what is in it
	require.NoError(t, os.Symlink("/etc/passwd\x1b[2J", filepath.Join(up[data], "link.sh")))

	var asked []Request
	ap := ApproverFunc(func(_ context.Context, r Request) (bool, error) {
		asked = append(asked, r)
		return filepath.Ext(r.Path) != ".sh", nil
	})
	rv, err := a.Review(context.Background(), cs, ap)
	require.NoError(t, err)
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	assert.Equal(t, []string{"/data/gone.txt", "/data/keep.txt", "/final/report.md"}, paths(rv.Applied))
	assert.Equal(t, []string{"/data/link.sh", "/data/sub/evil.sh"}, paths(rv.Refused))
	assert.Equal(t, []string{"/final/old.md", "/final/swap"}, paths(rv.Blocked))
	assert.Equal(t, "old swap\n", read(filepath.Join(final, "swap")))
	assert.Equal(t, []string{"/data/keep.txt", "/data/link.sh", "/data/sub/evil.sh", "/final/report.md", "/final/swap/in.md"}, paths(asked), "only ask policies ask")
	for _, r := range asked {
		if r.Path == "/data/link.sh" {
			assert.Equal(t, `"/etc/passwd\033[2J"`, r.Target, "a target is shown, safe to print")
		}
		if r.Path == "/data/keep.txt" {
			assert.Equal(t, "--- a/data/keep.txt\n+++ b/data/keep.txt\n@@ -1 +1 @@\n-old keep.txt\n+new keep\n", r.Diff)
		}
	}

	assert.Equal(t, "new keep\n", read(filepath.Join(data, "keep.txt")))
	assert.NoFileExists(t, filepath.Join(data, "gone.txt"))
	assert.NoDirExists(t, filepath.Join(data, "sub"))
	assert.Equal(t, "final\n", read(filepath.Join(final, "report.md")))
	assert.Equal(t, "old old.md\n", read(filepath.Join(final, "old.md")), "a blocked deletion does not happen")
	left, err := cs.List()
	require.NoError(t, err)
	assert.Empty(t, left, "what was not applied is discarded")
}

func TestReviewNoApprover(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	data := filepath.Join(base, "data")
	require.NoError(t, os.Mkdir(data, 0o755))
	a, err := Resolve([]Zone{{Name: "data", Path: data, Mode: ReadWrite}}, []Decl{{Name: "data", Mode: ReadWrite}})
	require.NoError(t, err)
	cs, err := changeset.Create(filepath.Join(base, "cs"), data)
	require.NoError(t, err)
	upperWrite(t, cs.Roots()[0].Upper, "x", "x")
	rv, err := a.Review(context.Background(), cs, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/data/x"}, paths(rv.Refused))
	assert.NoFileExists(t, filepath.Join(data, "x"))
}
