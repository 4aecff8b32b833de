package guard

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type indexEntry struct {
	name string
	mode uint32
}

const (
	modeFile = 0o100644
	modeLink = 0o120000
	modeDir  = 0o040000
)

// indexEntries encodes entries as git writes them in an index of version,
// with SHA-1 object names.
func indexEntries(version uint32, entries []indexEntry) []byte {
	var b, prev []byte
	for _, e := range entries {
		start := len(b)
		b = append(b, make([]byte, 24)...) // ctime, mtime, dev, ino
		b = binary.BigEndian.AppendUint32(b, e.mode)
		b = append(b, make([]byte, 12+20)...) // uid, gid, size, object name
		b = binary.BigEndian.AppendUint16(b, uint16(min(len(e.name), 0xfff)))
		if version == 4 {
			common := 0
			for common < len(prev) && common < len(e.name) && prev[common] == e.name[common] {
				common++
			}
			b = append(b, gitVarint(uint64(len(prev)-common))...)
			b = append(append(b, e.name[common:]...), 0)
			prev = []byte(e.name)
			continue
		}
		b = append(b, e.name...)
		for pad := (62 + len(e.name) + 8) &^ 7; len(b)-start < pad; {
			b = append(b, 0)
		}
	}
	return b
}

func gitVarint(v uint64) []byte {
	out := []byte{byte(v & 127)}
	for v >>= 7; v != 0; v >>= 7 {
		v--
		out = append([]byte{128 | byte(v&127)}, out...)
	}
	return out
}

func indexExt(sig string, data []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte(sig), uint32(len(data))), data...)
}

// buildIndex makes an index file: a header counting n entries, body (the
// entries and extensions) and the SHA-1 checksum git writes.
func buildIndex(version uint32, n int, body ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte("DIRC"), version), uint32(n))
	for _, p := range body {
		b = append(b, p...)
	}
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

func TestCheckIndex(t *testing.T) {
	good := []indexEntry{{".gitignore", modeFile}, {"a/.github/x", modeFile}, {"a/b", modeLink}, {"d/.gitmodules", modeFile}}
	for _, v := range []uint32{2, 3, 4} {
		assert.Empty(t, checkIndex(buildIndex(v, len(good), indexEntries(v, good)), 20), "version %d", v)
	}
	for _, tt := range []struct {
		name    string
		entries []indexEntry
	}{
		{"hook", []indexEntry{{".git/hooks/pre-commit", modeFile}}},
		{"upper case", []indexEntry{{"x/.GiT/config", modeFile}}},
		{"dot dot", []indexEntry{{"a/../../.bashrc", modeFile}}},
		{"absolute", []indexEntry{{"/etc/x", modeFile}}},
		{"empty component", []indexEntry{{"a//b", modeFile}}},
		{"dot", []indexEntry{{"./a", modeFile}}},
		{"trailing slash", []indexEntry{{"a/", modeFile}}},
		{"symlinked .gitmodules", []indexEntry{{".GITMODULES", modeLink}}},
		{"NUL inside", []indexEntry{{".git\x00/x", modeFile}}},
		{"behind a good one", append(good, indexEntry{"z/.git/hooks/x", modeFile})},
	} {
		for _, v := range []uint32{2, 4} {
			assert.NotEmpty(t, checkIndex(buildIndex(v, len(tt.entries), indexEntries(v, tt.entries)), 20), "%s, version %d", tt.name, v)
		}
	}
	// A sparse directory entry ends with a slash.
	sparse := []indexEntry{{"a/", modeDir}}
	assert.Empty(t, checkIndex(buildIndex(2, 1, indexEntries(2, sparse), indexExt("sdir", nil)), 20))

	// Version 4 names are taken from the previous one: what counts is the
	// name put together.
	v4 := []indexEntry{{"a/.gitx", modeFile}, {"a/.git/hooks/x", modeFile}}
	assert.NotEmpty(t, checkIndex(buildIndex(4, 2, indexEntries(4, v4)), 20))

	t.Run("extensions", func(t *testing.T) {
		one := indexEntries(2, good[:1])
		reuc := func(p string) []byte {
			d := append([]byte(p), 0)
			d = append(d, "100644\x000\x000\x00"...)
			return append(d, make([]byte, 20)...)
		}
		assert.Empty(t, checkIndex(buildIndex(2, 1, one, indexExt("REUC", reuc("a/b"))), 20))
		assert.NotEmpty(t, checkIndex(buildIndex(2, 1, one, indexExt("REUC", reuc(".git/hooks/x"))), 20))
		assert.Empty(t, checkIndex(buildIndex(2, 1, one, indexExt("ZZZZ", []byte("skipped"))), 20))
		assert.NotEmpty(t, checkIndex(buildIndex(2, 1, one, indexExt("zzzz", nil)), 20), "git refuses it")
		assert.NotEmpty(t, checkIndex(buildIndex(2, 1, one, indexExt("TREE", []byte("x"))[:8]), 20), "truncated")
		unnamed := indexEntries(2, []indexEntry{{"", modeFile}})
		assert.NotEmpty(t, checkIndex(buildIndex(2, 1, unnamed), 20))
		assert.Empty(t, checkIndex(buildIndex(2, 1, unnamed, indexExt("link", make([]byte, 20))), 20),
			"a split index's replacements have no name")
	})

	// git reads the entries by the offset table of an "end of index
	// entries" record in threads: an entry hidden from the sequential
	// read (here in an extension git skips) is read there.
	t.Run("offset table", func(t *testing.T) {
		one := indexEntries(2, good[:1])
		hidden := indexEntries(2, []indexEntry{{".git/hooks/pre-commit", modeFile}})
		skipped := indexExt("ZZZZ", hidden)
		hiddenAt := 12 + len(one) + 8
		ieot := binary.BigEndian.AppendUint32(nil, 1)
		ieot = binary.BigEndian.AppendUint32(ieot, uint32(hiddenAt))
		ieot = binary.BigEndian.AppendUint32(ieot, 1)
		extAt := 12 + len(one)
		eoie := indexExt("EOIE", append(binary.BigEndian.AppendUint32(nil, uint32(extAt)), make([]byte, 20)...))
		b := buildIndex(2, 1, one, skipped, indexExt("IEOT", ieot), eoie)
		assert.Contains(t, checkIndex(b, 20), "pre-commit")
		b = buildIndex(2, 1, one, skipped, eoie)
		assert.Empty(t, checkIndex(b, 20), "the same without the table")
	})

	for _, b := range [][]byte{nil, []byte("DIRC"), buildIndex(5, 0), buildIndex(2, 3, indexEntries(2, good[:1]))} {
		assert.NotEmpty(t, checkIndex(b, 20), "%q", b)
	}
}

// TestCheckIndexGit checks indexes git writes, in every form, and shows
// that git takes a crafted entry as written.
func TestCheckIndexGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=a",
			"GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := c.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	repo := func(args ...string) string {
		dir := t.TempDir()
		git(dir, append([]string{"init", "-q"}, args...)...)
		for _, p := range []string{"a/b/c", "a/d", ".gitignore", "e"} {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644))
		}
		git(dir, "add", "-A")
		git(dir, "commit", "-qm", "x")
		return dir
	}
	read := func(dir, name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, ".git", name))
		require.NoError(t, err)
		return b
	}
	dir := repo()
	assert.Empty(t, checkIndex(read(dir, "index"), 20), "version 2")
	git(dir, "update-index", "--index-version", "4")
	assert.Empty(t, checkIndex(read(dir, "index"), 20), "version 4")
	git(dir, "-c", "index.threads=true", "-c", "index.recordOffsetTable=true",
		"-c", "index.recordEndOfIndexEntries=true", "update-index", "--index-version", "2", "--really-refresh")
	assert.Empty(t, checkIndex(read(dir, "index"), 20), "with an offset table")
	git(dir, "update-index", "--split-index")
	assert.Empty(t, checkIndex(read(dir, "index"), 20), "split")
	shared, err := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
	require.NoError(t, err)
	require.NotEmpty(t, shared)
	assert.Empty(t, checkIndex(read(dir, filepath.Base(shared[0])), 20), "shared")

	if out, err := exec.Command("git", "init", "-q", "--object-format=sha256", t.TempDir()).CombinedOutput(); err == nil {
		dir := repo("--object-format=sha256")
		assert.Empty(t, checkIndex(read(dir, "index"), 32), "sha256")
	} else {
		t.Logf("no sha256 repositories: %s", out)
	}

	// The control: git takes a crafted index's entry as it is.
	dir = repo()
	crafted := buildIndex(2, 1, indexEntries(2, []indexEntry{{".git/hooks/pre-commit", modeFile}}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "index"), crafted, 0o644))
	assert.Equal(t, ".git/hooks/pre-commit", strings.TrimSpace(git(dir, "ls-files")))
	assert.NotEmpty(t, checkIndex(crafted, 20))
}

func BenchmarkCheckIndex(b *testing.B) {
	entries := make([]indexEntry, 10000)
	for i := range entries {
		entries[i] = indexEntry{fmt.Sprintf("d%d/f%d", i/100, i%100), modeFile}
	}
	index := buildIndex(2, len(entries), indexEntries(2, entries))
	for b.Loop() {
		if bad := checkIndex(index, 20); bad != "" {
			b.Fatal(bad)
		}
	}
}
