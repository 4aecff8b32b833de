package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Result is what one bench run measured. Times are in microseconds. The JSON
// names are a contract: scripts/bench.sh and users' own scripts read them.
type Result struct {
	Runs            int   `json:"runs"`
	Parallel        int   `json:"parallel"`
	ParentHeapBytes int64 `json:"parent_heap_bytes"`
	DirectSpawn     bool  `json:"direct_spawn"`
	// Helper is the binary that ran the inits, when not this one.
	Helper string `json:"helper,omitempty"`
	// Workspace is the workspace given (Options.Workspace); empty for a
	// fresh empty one.
	Workspace string `json:"workspace,omitempty"`

	P50us  int64   `json:"p50_us"`
	P90us  int64   `json:"p90_us"`
	P99us  int64   `json:"p99_us"`
	PerSec float64 `json:"per_sec"`
	// InitRSSKB is the init's peak resident set (VmHWM) in KiB; 0 where
	// there is no init process (macOS).
	InitRSSKB int64 `json:"init_rss_kb"`
	// IdleRSSKB is the mean resident set (VmRSS) in KiB of the IdleInits
	// sandboxes built ahead and waiting for a command; 0 where none are
	// kept (DirectSpawn, macOS).
	IdleRSSKB int64 `json:"idle_rss_kb"`
	// IdlePrivateKB is the part of it no other init of the same binary
	// shares (the binary's pages are shared): what each adds.
	IdlePrivateKB int64 `json:"idle_private_kb"`
	IdleInits     int   `json:"idle_inits"`

	// Bwrap is set with Options.VsBwrap.
	*Bwrap
	// MCP is set with Options.VsMCP.
	MCP *MCP `json:"mcp,omitempty"`
}

// Bwrap holds bubblewrap's figures, measured alongside, and corral's ratio
// to them: below 1 for p50 and above 1 for per_sec mean corral is faster.
type Bwrap struct {
	P50us       int64   `json:"bwrap_p50_us"`
	P90us       int64   `json:"bwrap_p90_us"`
	P99us       int64   `json:"bwrap_p99_us"`
	PerSec      float64 `json:"bwrap_per_sec"`
	RatioP50    float64 `json:"ratio_p50"`
	RatioPerSec float64 `json:"ratio_per_sec"`
}

// WriteJSON writes r as an indented JSON object.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r as a small aligned table.
func (r *Result) WriteTable(w io.Writer) error {
	spawn := "spawner process"
	if r.DirectSpawn {
		spawn = "direct clone"
	}
	ws := ""
	if r.Workspace != "" {
		ws = ", workspace " + r.Workspace
	}
	fmt.Fprintf(w, "corral bench: %d runs of /bin/true, parallel %d, parent heap %s, %s%s\n",
		r.Runs, r.Parallel, FormatSize(r.ParentHeapBytes), spawn, ws)
	row := "%-14s%9s%9s%9s%11s\n"
	fmt.Fprintf(w, row, "", "p50 µs", "p90 µs", "p99 µs", "spawns/s")
	fmt.Fprintf(w, row, "corral", itoa(r.P50us), itoa(r.P90us), itoa(r.P99us), ftoa(r.PerSec, 1))
	if b := r.Bwrap; b != nil {
		fmt.Fprintf(w, row, "bwrap", itoa(b.P50us), itoa(b.P90us), itoa(b.P99us), ftoa(b.PerSec, 1))
		fmt.Fprintf(w, row, "corral/bwrap", ftoa(b.RatioP50, 2)+"x", "", "", ftoa(b.RatioPerSec, 2)+"x")
	}
	if m := r.MCP; m != nil {
		fmt.Fprintf(w, row, "mcp shell", itoa(m.P50us), itoa(m.P90us), "", "")
		fmt.Fprintf(w, row, "mcp/library", ftoa(m.RatioP50, 2)+"x", "", "", "")
	}
	fmt.Fprintf(w, "%-14s%9d KiB\n", "init peak RSS", r.InitRSSKB)
	_, err := fmt.Fprintf(w, "%-14s%9d KiB, %d KiB private (mean of %d ready inits)\n", "idle RSS", r.IdleRSSKB, r.IdlePrivateKB, r.IdleInits)
	return err
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func ftoa(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }
