package changeset

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// largeTree is 10,000 text files of about 1 KiB in 100 directories.
func largeTree(tb testing.TB, root string) {
	tb.Helper()
	line := strings.Repeat("x", 60) + "\n"
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("dir%03d", d))
		require.NoError(tb, os.Mkdir(dir, 0o755))
		for f := range 100 {
			content := fmt.Sprintf("file %d/%d\n%s", d, f, strings.Repeat(line, 16))
			require.NoError(tb, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), []byte(content), 0o644))
		}
	}
}

// largeFixture changes a tenth of the files, adds 100 and deletes 100.
func largeFixture(tb testing.TB) *fixture {
	tb.Helper()
	base := tb.TempDir()
	lower := filepath.Join(base, "lower")
	require.NoError(tb, os.Mkdir(lower, 0o755))
	largeTree(tb, lower)
	cs, err := Create(filepath.Join(base, "cs"), lower)
	require.NoError(tb, err)
	f := &fixture{cs: cs, lower: cs.Roots()[0].Path, upper: cs.Roots()[0].Upper}
	for d := range 100 {
		for i := range 10 {
			name := fmt.Sprintf("dir%03d/f%03d.txt", d, i*10)
			b, err := os.ReadFile(filepath.Join(lower, name))
			require.NoError(tb, err)
			f.write(tb, name, strings.Replace(string(b), "xxxx", "yyyy", 1))
		}
		f.write(tb, fmt.Sprintf("dir%03d/new.txt", d), "new\n")
		f.whiteout(tb, fmt.Sprintf("dir%03d/f001.txt", d))
	}
	return f
}

func TestLargeTree(t *testing.T) {
	f := largeFixture(t)
	changes, err := f.cs.List()
	require.NoError(t, err)
	counts := map[Status]int{}
	for _, ch := range changes {
		counts[ch.Status]++
	}
	assert.Equal(t, map[Status]int{Modified: 1000, Added: 100, Deleted: 100}, counts)
	base, err := f.cs.roots[0].loadBaseline()
	require.NoError(t, err)
	assert.Len(t, base, 10_100, "every file and directory has a fingerprint")
}

func BenchmarkCreate10k(b *testing.B) {
	lower := b.TempDir()
	largeTree(b, lower)
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "cs")
		_, err := Create(dir, lower)
		require.NoError(b, err)
	}
}

func BenchmarkList10k(b *testing.B) {
	f := largeFixture(b)
	for b.Loop() {
		_, err := f.cs.List()
		require.NoError(b, err)
	}
}

func BenchmarkDiff10k(b *testing.B) {
	f := largeFixture(b)
	for b.Loop() {
		require.NoError(b, f.cs.Diff(io.Discard))
	}
}

func BenchmarkApply10k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		f := largeFixture(b)
		b.StartTimer()
		_, err := f.cs.Apply(ApplyOptions{})
		require.NoError(b, err)
	}
}
