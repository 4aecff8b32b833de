package bench

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/corralhq/corral"
)

// The benchmarks time the paths `corral bench` measures, one spawn per op:
//
//	go test -run '^$' -bench . ./internal/bench/

// newSandbox returns a sandbox on a fresh workspace whose helper process
// has already started, so no op pays for it.
func newSandbox(b *testing.B, direct bool) *sandbox {
	b.Helper()
	sb, err := corral.New(corral.Config{Workspace: b.TempDir(), DirectSpawn: direct})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.Close() })
	s := &sandbox{sb: sb}
	if err := s.spawn(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s
}

func loop(b *testing.B, s spawner) {
	ctx := context.Background()
	for b.Loop() {
		if err := s.spawn(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCorral spawns through the library from a caller with a small and
// a 2 GiB live heap, through the spawner (the default) and cloning directly.
func BenchmarkCorral(b *testing.B) {
	for _, heap := range []int64{0, 2 << 30} {
		for _, direct := range []bool{false, true} {
			b.Run(fmt.Sprintf("heap=%s/direct=%t", strings.ReplaceAll(FormatSize(heap), " ", ""), direct), func(b *testing.B) {
				if err := CheckHeap(heap); err != nil {
					b.Skipf("parent heap %s: %v", FormatSize(heap), err)
				}
				ballast := Grow(heap)
				loop(b, newSandbox(b, direct))
				runtime.KeepAlive(ballast)
			})
		}
	}
}

// BenchmarkCorralParallel spawns from 8 goroutines at once.
func BenchmarkCorralParallel(b *testing.B) {
	s := newSandbox(b, false)
	parallel(b, s)
}

// BenchmarkBwrap starts bubblewrap with the same isolation through os/exec.
func BenchmarkBwrap(b *testing.B) {
	loop(b, newBwrap(b))
}

// BenchmarkBwrapParallel starts bubblewrap from 8 goroutines at once.
func BenchmarkBwrapParallel(b *testing.B) {
	parallel(b, newBwrap(b))
}

// BenchmarkBareExec is the floor: /bin/true through os/exec, no sandbox.
func BenchmarkBareExec(b *testing.B) {
	loop(b, bare{})
}

func newBwrap(b *testing.B) *bwrap {
	path, err := lookBwrap()
	if err != nil {
		b.Skip(err)
	}
	return &bwrap{path: path, workspace: b.TempDir()}
}

// parallel runs s from 8 goroutines, whatever GOMAXPROCS is.
func parallel(b *testing.B, s spawner) {
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.spawn(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// bare spawns /bin/true with no sandbox.
type bare struct{}

func (bare) spawn(ctx context.Context) error {
	return exec.CommandContext(ctx, "/bin/true").Run()
}
