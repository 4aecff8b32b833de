package guard

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/fuzzseed"
)

// TestFuzzSeeds turns the files git wrote for scripts/fuzz-corpus.sh
// (CORRAL_FUZZ_FROM) into seed inputs of this package's fuzz targets.
func TestFuzzSeeds(t *testing.T) {
	fuzzseed.Enabled(t)
	from := os.Getenv("CORRAL_FUZZ_FROM")
	entries, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		require.NoError(t, err)
		name := "git-" + e.Name()
		switch kind, rest, _ := strings.Cut(e.Name(), "-"); kind {
		case "index":
			require.Empty(t, checkIndex(b, map[bool]int{false: 20, true: 32}[strings.Contains(rest, "sha256")]), e.Name())
			fuzzseed.Write(t, "FuzzCheckIndex", name, b, strings.Contains(rest, "sha256"))
		case "config":
			fuzzseed.Write(t, "FuzzParseConfig", name, b)
		case "state":
			fuzzseed.Write(t, "FuzzStateFile", name, rest, b)
		}
	}
}

// TestCheckIndexGitWritten: every index git wrote among the seeds
// (scripts/fuzz-corpus.sh) passes the check, an offset table's blocks
// in a version 4 index among them.
func TestCheckIndexGitWritten(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzCheckIndex", "git-*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		require.GreaterOrEqual(t, len(lines), 3, f)
		q, ok := strings.CutPrefix(lines[1], "[]byte(")
		require.True(t, ok, f)
		index, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
		require.NoError(t, err, f)
		hashSize := 20
		if lines[2] == "bool(true)" {
			hashSize = 32
		}
		require.Empty(t, checkIndex([]byte(index), hashSize), f)
	}
}
