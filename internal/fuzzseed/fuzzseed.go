// Package fuzzseed writes seed inputs of Go's native fuzz targets into a
// package's testdata/fuzz/<Target> directory, in the corpus file format
// `go test` reads, so that a seed made from real files (an index git
// wrote, a request curl sent) is committed and runs in every `go test`.
// The packages' TestFuzzSeeds helpers use it when scripts/fuzz-corpus.sh
// sets CORRAL_FUZZ_SEEDS=1; nothing else does.
package fuzzseed

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Enabled skips t unless CORRAL_FUZZ_SEEDS=1: seeds are written on
// purpose, by scripts/fuzz-corpus.sh, not by every test run.
func Enabled(t testing.TB) {
	t.Helper()
	if os.Getenv("CORRAL_FUZZ_SEEDS") != "1" {
		t.Skip("writes seed corpora: run scripts/fuzz-corpus.sh")
	}
}

// Write writes one input of target, the fuzz function's arguments after
// its *testing.T, to testdata/fuzz/<target>/<name> of the package under
// test. name "" names the file by its content, as `go test` does.
func Write(t testing.TB, target, name string, args ...any) {
	t.Helper()
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(v)))
		case string:
			fmt.Fprintf(&b, "string(%s)\n", strconv.Quote(v))
		case bool:
			fmt.Fprintf(&b, "bool(%t)\n", v)
		case uint8:
			fmt.Fprintf(&b, "byte(%s)\n", strconv.QuoteRune(rune(v)))
		case uint16:
			fmt.Fprintf(&b, "uint16(%d)\n", v)
		case uint32:
			fmt.Fprintf(&b, "uint32(%d)\n", v)
		case uint64:
			fmt.Fprintf(&b, "uint64(%d)\n", v)
		default:
			t.Fatalf("fuzzseed: no corpus form for %T", a)
		}
	}
	if name == "" {
		sum := sha256.Sum256([]byte(b.String()))
		name = hex.EncodeToString(sum[:8])
	}
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
