package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corralhq/corral"
)

// Options say what to measure.
type Options struct {
	// Runs is the number of timed spawns of each kind (at least 1).
	Runs int
	// Parallel is how many goroutines spawn at once in the throughput phase
	// (at least 1).
	Parallel int
	// ParentHeap is the live heap, in bytes, the calling process grows to
	// before spawning.
	ParentHeap int64
	// VsBwrap also measures bubblewrap with the same isolation.
	VsBwrap bool
	// VsMCP also measures a shell call of `true` through corral's MCP
	// server (MCPServer, started with the workspace), client to result
	// over stdio, alternating with library spawns.
	VsMCP bool
	// MCPServer is the corral-mcp executable VsMCP starts.
	MCPServer string
	// DirectSpawn is passed to corral.Config.
	DirectSpawn bool
	// Helper is passed to corral.Config: the binary that runs the inits.
	Helper string
	// Workspace is the sandbox's workspace; empty means a fresh temporary
	// directory, removed afterwards.
	Workspace string
}

// SandboxError says the sandbox could not be built or a command in it did
// not run to success.
type SandboxError struct {
	Op  string
	Err error
}

func (e *SandboxError) Error() string { return e.Op + ": " + e.Err.Error() }

func (e *SandboxError) Unwrap() error { return e.Err }

// Validate reports the first option that is out of range.
func (o Options) Validate() error {
	switch {
	case o.Runs < 1:
		return fmt.Errorf("runs %d: want at least 1", o.Runs)
	case o.Parallel < 1:
		return fmt.Errorf("parallel %d: want at least 1", o.Parallel)
	case o.ParentHeap < 0 || o.ParentHeap > math.MaxInt:
		return fmt.Errorf("parent heap %d: want 0 to %d bytes", o.ParentHeap, math.MaxInt)
	}
	if err := CheckHeap(o.ParentHeap); err != nil {
		return fmt.Errorf("parent heap %s: %w", FormatSize(o.ParentHeap), err)
	}
	return nil
}

// Run measures. It grows the heap first and keeps it alive to the end.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var bwrapPath string
	if o.VsBwrap {
		var err error
		if bwrapPath, err = lookBwrap(); err != nil {
			return nil, err
		}
	}
	if o.VsMCP {
		if err := checkMCPServer(o.MCPServer); err != nil {
			return nil, err
		}
	}
	ws, cleanup, err := workspace(o.Workspace)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ballast := Grow(o.ParentHeap)
	defer runtime.KeepAlive(ballast)
	sb, err := corral.New(corral.Config{Workspace: ws, DirectSpawn: o.DirectSpawn, Helper: o.Helper})
	if err != nil {
		return nil, &SandboxError{Op: "corral.New", Err: err}
	}
	defer sb.Close()
	var other spawner
	if bwrapPath != "" {
		other = &bwrap{path: bwrapPath, workspace: sb.Workspace()}
	}
	return measure(ctx, o, &sandbox{sb: sb}, other)
}

// measure runs the three phases: latency, throughput, init memory.
func measure(ctx context.Context, o Options, sb *sandbox, bw spawner) (*Result, error) {
	r := &Result{Runs: o.Runs, Parallel: o.Parallel, ParentHeapBytes: o.ParentHeap, DirectSpawn: o.DirectSpawn, Helper: o.Helper, Workspace: o.Workspace}
	ours, theirs, err := latencies(ctx, o.Runs, sb, bw)
	if err != nil {
		return nil, err
	}
	lat := summarize(ours)
	r.P50us, r.P90us, r.P99us = micros(lat.P50), micros(lat.P90), micros(lat.P99)
	if r.PerSec, err = throughput(ctx, o.Runs, o.Parallel, sb); err != nil {
		return nil, err
	}
	if bw != nil {
		if r.Bwrap, err = compare(ctx, o, r, theirs, bw); err != nil {
			return nil, err
		}
	}
	if o.VsMCP {
		if r.MCP, err = compareMCP(ctx, o, sb); err != nil {
			return nil, err
		}
	}
	if r.InitRSSKB, err = initPeakRSS(ctx, sb.sb); err != nil {
		return nil, err
	}
	r.IdleRSSKB, r.IdlePrivateKB, r.IdleInits, err = idleInitRSS(ctx, sb.sb)
	return r, err
}

// compare fills bubblewrap's figures from its latency samples and its own
// throughput phase.
func compare(ctx context.Context, o Options, r *Result, samples []time.Duration, bw spawner) (*Bwrap, error) {
	lat := summarize(samples)
	b := &Bwrap{P50us: micros(lat.P50), P90us: micros(lat.P90), P99us: micros(lat.P99)}
	var err error
	if b.PerSec, err = throughput(ctx, o.Runs, o.Parallel, bw); err != nil {
		return nil, err
	}
	b.RatioP50 = ratio(float64(r.P50us), float64(b.P50us))
	b.RatioPerSec = ratio(r.PerSec, b.PerSec)
	return b, nil
}

// spawner starts /bin/true one way and waits for it.
type spawner interface {
	spawn(ctx context.Context) error
}

// latencies times runs sequential spawns of ours, alternating with other
// when it is not nil. One untimed spawn of each comes first.
func latencies(ctx context.Context, runs int, ours, other spawner) (mine, theirs []time.Duration, err error) {
	kinds := []spawner{ours}
	if other != nil {
		kinds = append(kinds, other)
	}
	samples := make([][]time.Duration, len(kinds))
	for _, k := range kinds {
		if err := k.spawn(ctx); err != nil {
			return nil, nil, err
		}
	}
	for range runs {
		for i, k := range kinds {
			if err := ready(ctx, k); err != nil {
				return nil, nil, err
			}
			d, err := timed(ctx, k)
			if err != nil {
				return nil, nil, err
			}
			samples[i] = append(samples[i], d)
		}
	}
	if other != nil {
		theirs = samples[1]
	}
	return samples[0], theirs, nil
}

// ready lets a spawner that builds sandboxes ahead of time finish building
// them, untimed: a latency sample is then what a command costs when it does
// not follow another at once, as an agent's tool calls do not. Throughput
// runs spawn back to back and include the building.
func ready(ctx context.Context, s spawner) error {
	if w, ok := s.(interface{ warm(context.Context) error }); ok {
		return w.warm(ctx)
	}
	return nil
}

func timed(ctx context.Context, s spawner) (time.Duration, error) {
	start := time.Now()
	err := s.spawn(ctx)
	return time.Since(start), err
}

// throughput runs total spawns of s from parallel goroutines and returns
// spawns per second of wall time, to one decimal.
func throughput(ctx context.Context, total, parallel int, s spawner) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, parallel)
	start := time.Now()
	for g := range min(parallel, total) {
		wg.Go(func() {
			for next.Add(1) <= int64(total) && errs[g] == nil {
				errs[g] = s.spawn(ctx)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return math.Round(float64(total)/elapsed.Seconds()*10) / 10, nil
}

// workspace returns dir, or a new temporary directory and its removal.
func workspace(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "corral-bench-")
	if err != nil {
		return "", nil, fmt.Errorf("workspace: %w", err)
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// Grow returns n bytes of live heap with every page touched, so the calling
// process has the resident memory and page tables of a large agent. Keep the
// result alive for as long as it should count.
func Grow(n int64) []byte {
	if n <= 0 {
		return nil
	}
	b := make([]byte, n)
	page := os.Getpagesize()
	for i := 0; i < len(b); i += page {
		b[i] = 1
	}
	return b
}
