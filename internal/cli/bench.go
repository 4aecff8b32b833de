package cli

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/bench"
)

// benchFlags are the flags of `corral bench`.
type benchFlags struct {
	runs       int
	parentHeap string
	parallel   int
	vsBwrap    bool
	vsMCP      bool
	json       bool
	direct     bool
	workspace  string
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [--runs N] [--parent-heap SIZE] [--parallel P] [--vs-bwrap] [--workspace DIR] [--json]",
		Short: "Measure how fast sandboxes spawn from inside this process",
		Long: `Spawn N sandboxed /bin/true through the library, as an agent linking it
would, and report latency percentiles in microseconds, spawns per second
with P spawning at once, and the sandbox init's peak RSS.

--parent-heap first grows this process's live heap (256MiB, 1GiB, plain
bytes), to show what spawning costs a large caller. --vs-bwrap also times
bubblewrap with the same isolation, alternating with corral's runs, and
reports corral/bwrap ratios (below 1 for p50 and above 1 for spawns/s mean
corral is faster). --vs-mcp also times a shell call of true through the MCP
server of 'corral mcp' (corral-mcp beside corral, started with the
workspace and spoken to over stdio, as an agent's client does), from the
client's request to the result, alternating with library spawns, and
reports its p50 over theirs.

--workspace spawns in sandboxes whose workspace is DIR (an existing
directory, left as it is) instead of an empty temporary directory, to show
what the size and shape of a project cost each spawn; bubblewrap (with
--vs-bwrap) binds the same directory.

Exit status: 0 measured; 2 bad flag value; 125 the sandbox could not be
built; 1 anything else (for example bwrap missing).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options()
			if err != nil {
				return err
			}
			return runBench(cmd.Context(), cmd.OutOrStdout(), o, f.json)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.runs, "runs", 200, "spawn `N` times for each measurement")
	fl.StringVar(&f.parentHeap, "parent-heap", "0", "grow this process's heap to `SIZE` first")
	fl.IntVar(&f.parallel, "parallel", 1, "spawns per second with `P` spawning at once")
	fl.BoolVar(&f.vsBwrap, "vs-bwrap", false, "also measure bubblewrap (bwrap on PATH) with the same isolation")
	fl.BoolVar(&f.vsMCP, "vs-mcp", false, "also time a shell call of true through the MCP server (corral mcp), alternating with library spawns")
	fl.BoolVar(&f.json, "json", false, "print one JSON object")
	fl.BoolVar(&f.direct, "direct", false, "clone sandboxes from this process (Config.DirectSpawn), as the CLI does")
	fl.StringVar(&f.workspace, "workspace", "", "spawn with the existing directory `DIR` as the workspace (default: an empty temporary one)")
	return cmd
}

// options checks the flags; every error is a usage error.
func (f *benchFlags) options() (bench.Options, error) {
	if f.runs < 1 {
		return bench.Options{}, usageError("--runs %d: want at least 1", f.runs)
	}
	if f.parallel < 1 {
		return bench.Options{}, usageError("--parallel %d: want at least 1", f.parallel)
	}
	heap, err := bench.ParseSize(f.parentHeap)
	if err != nil {
		return bench.Options{}, usageError("--parent-heap: %v", err)
	}
	if err := bench.CheckHeap(heap); err != nil {
		return bench.Options{}, usageError("--parent-heap %s: %v", f.parentHeap, err)
	}
	ws, err := benchWorkspace(f.workspace)
	if err != nil {
		return bench.Options{}, err
	}
	// The inits run from corral-init beside corral when it is there, as
	// for corral run and corral mcp.
	helper := withInitHelper(corral.Config{}).Helper
	o := bench.Options{Runs: f.runs, Parallel: f.parallel, ParentHeap: heap, VsBwrap: f.vsBwrap, VsMCP: f.vsMCP, DirectSpawn: f.direct, Helper: helper, Workspace: ws}
	if f.vsMCP {
		// The server as an agent runs it: corral-mcp beside corral,
		// started over stdio.
		if o.MCPServer, err = mcpServerPath(corral.Config{}); err != nil {
			return o, err
		}
	}
	return o, nil
}

// benchWorkspace checks --workspace: empty, or an existing directory,
// returned absolute.
func benchWorkspace(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageError("--workspace %s: %v", dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", usageError("--workspace %s: no such directory", dir)
	case err != nil:
		return "", usageError("--workspace %s: %v", dir, errors.Unwrap(err))
	case !fi.IsDir():
		return "", usageError("--workspace %s: not a directory", dir)
	}
	return abs, nil
}

func runBench(ctx context.Context, w io.Writer, o bench.Options, asJSON bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	r, err := bench.Run(ctx, o)
	if err != nil {
		return benchError(err)
	}
	if asJSON {
		return r.WriteJSON(w)
	}
	return r.WriteTable(w)
}

// benchError maps a failed measurement onto exit statuses: 125 when the
// sandbox could not be built, 1 otherwise.
func benchError(err error) error {
	var se *bench.SandboxError
	var ce *corral.ConfigError
	var sue *corral.SetupError
	if errors.As(err, &se) || errors.As(err, &ce) || errors.As(err, &sue) {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	return &exitError{code: 1, msg: err.Error()}
}
