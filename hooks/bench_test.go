package hooks

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// mixedLog builds size bytes of the output agents' tools produce: log lines
// with ids and URLs, hashes, JSON, prose, paths, base64 and hex blobs, and
// one secret (plain or encoded) every 64 KiB or so.
func mixedLog(size int) []byte {
	f := newFake(10)
	secrets := secretCases(11)
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		u := f.str(hexLow, 32)
		switch i % 10 {
		case 0, 1, 2:
			fmt.Fprintf(&b, "2025-01-%02dT12:%02d:%02d.%03dZ INFO request id=%s-%s-%s-%s-%s path=/api/v1/items?page=%d&q=hello%%20world status=200 dur=%dms\n",
				i%28+1, i%60, i%60, i%1000, u[:8], u[8:12], u[12:16], u[16:20], u[20:], i%9, i%500)
		case 3:
			s1, s2 := sha1.Sum([]byte(u)), sha256.Sum256([]byte(u))
			fmt.Fprintf(&b, "commit %x\n%x  dist/app-%d.tar.gz\n", s1, s2, i)
		case 4:
			fmt.Fprintf(&b, `{"level":"debug","msg":"sync the task-list for %s","attempt":%d,"ok":true}`+"\n", f.str(alnum, 8), i%7)
		case 5:
			b.WriteString("The build finished; 3 packages were skipped and the risk-assessment step was cached. Nothing else to report.\n")
		case 6:
			fmt.Fprintf(&b, "/usr/lib/x86_64-linux-gnu/lib%s.so.6 /home/agent/go/pkg/mod/github.com/x/y@v1.%d.0/z.go:%d\n", f.str(alnum, 5), i%20, i%900)
		case 7:
			raw := []byte(f.str(alnum, 40+i%500))
			b.WriteString("payload: " + base64.StdEncoding.EncodeToString(raw) + "\n")
		case 8:
			b.WriteString(hex.EncodeToString([]byte(f.str(alnum, 32))) + "\n")
		case 9:
			if i%640 == 9 {
				sc := secrets[i/640%len(secrets)]
				enc := encoders[i/640%len(encoders)]
				b.WriteString("value=" + enc.encode(sc.secret) + "\n")
			} else {
				b.WriteString("ok\n")
			}
		}
	}
	return []byte(b.String()[:size])
}

func benchmarkScan(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		Scan(data)
	}
}

func BenchmarkScanMixed1MiB(b *testing.B)  { benchmarkScan(b, mixedLog(1<<20)) }
func BenchmarkScanMixed10MiB(b *testing.B) { benchmarkScan(b, mixedLog(10<<20)) }

func BenchmarkScanProse1MiB(b *testing.B) {
	line := "The quick brown fox jumps over the lazy dog; ask-for-help, task-list, Monday 12:30.\n"
	benchmarkScan(b, []byte(strings.Repeat(line, 1<<20/len(line))))
}

func BenchmarkScanBase64Blob1MiB(b *testing.B) {
	raw := []byte(newFake(12).str(alnum+"\x00\xff", 3<<18))
	benchmarkScan(b, []byte(wrap(base64.StdEncoding.EncodeToString(raw), 76)))
}

func BenchmarkScanHexBlob1MiB(b *testing.B) {
	benchmarkScan(b, []byte(hex.EncodeToString([]byte(newFake(13).str(alnum, 1<<19)))))
}

// TestMixedLogFindings keeps the benchmark honest: its input holds secrets
// and the scan finds them.
func TestMixedLogFindings(t *testing.T) {
	found := Scan(mixedLog(1 << 20))
	if len(found) == 0 {
		t.Fatal("the benchmark input should hold secrets")
	}
	t.Logf("%d findings in 1 MiB, e.g. %v", len(found), found[0])
}
