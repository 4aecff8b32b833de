package corral

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
)

// BenchmarkSpawn measures starting /bin/true in a sandbox and waiting for it,
// from a caller holding a small or a 1 GiB live heap, through the spawner
// (the library default) and by cloning directly. Through the spawner the cost
// stays flat; cloning directly pays a full fork of the caller.
func BenchmarkSpawn(b *testing.B) {
	ws := b.TempDir()
	for _, heap := range []int{0, 1 << 30} {
		for _, direct := range []bool{false, true} {
			name := fmt.Sprintf("heap=%dMiB/direct=%t", heap>>20, direct)
			b.Run(name, func(b *testing.B) {
				ballast := grow(heap)
				sb, err := New(Config{Workspace: ws, DirectSpawn: direct})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				sb.Command(ctx, "/bin/true").Run() // start the spawner outside the timing
				b.ResetTimer()
				for b.Loop() {
					if err := sb.Command(ctx, "/bin/true").Run(); err != nil {
						b.Fatal(err)
					}
				}
				runtime.KeepAlive(ballast)
			})
		}
	}
}

// grow allocates n bytes of live heap and touches every page, as a
// long-running agent's heap would be.
func grow(n int) []byte {
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := 0; i < n; i += os.Getpagesize() {
		b[i] = 1
	}
	return b
}
