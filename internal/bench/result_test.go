package bench

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func jsonKeys(t *testing.T, r *Result) []string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, r.WriteJSON(&buf))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The names are read by scripts/bench.sh and by users' scripts.
func TestJSONFieldNames(t *testing.T) {
	base := []string{"direct_spawn", "idle_inits", "idle_private_kb", "idle_rss_kb", "init_rss_kb", "p50_us", "p90_us", "p99_us", "parallel", "parent_heap_bytes", "per_sec", "runs"}
	assert.Equal(t, base, jsonKeys(t, &Result{}))

	withBwrap := append(slices.Clone(base), "bwrap_p50_us", "bwrap_p90_us", "bwrap_p99_us", "bwrap_per_sec", "ratio_p50", "ratio_per_sec")
	slices.Sort(withBwrap)
	assert.Equal(t, withBwrap, jsonKeys(t, &Result{Bwrap: &Bwrap{}}))
}

func TestJSONValues(t *testing.T) {
	r := &Result{Runs: 3, P50us: 1500, PerSec: 812.5, InitRSSKB: 6000, Bwrap: &Bwrap{P50us: 3000, RatioP50: 0.5}}
	var buf bytes.Buffer
	require.NoError(t, r.WriteJSON(&buf))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	assert.Equal(t, 3.0, m["runs"])
	assert.Equal(t, 1500.0, m["p50_us"])
	assert.Equal(t, 812.5, m["per_sec"])
	assert.Equal(t, 3000.0, m["bwrap_p50_us"])
	assert.Equal(t, 0.5, m["ratio_p50"])
}

func TestWriteTable(t *testing.T) {
	r := &Result{
		Runs: 200, Parallel: 8, ParentHeapBytes: 2 << 30,
		P50us: 1500, P90us: 1900, P99us: 2500, PerSec: 1200, InitRSSKB: 6144, IdleRSSKB: 5800, IdlePrivateKB: 1300, IdleInits: 2,
		Bwrap: &Bwrap{P50us: 4100, P90us: 4500, P99us: 6000, PerSec: 500, RatioP50: 0.366, RatioPerSec: 2.4},
	}
	var buf bytes.Buffer
	require.NoError(t, r.WriteTable(&buf))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	assert.Equal(t, []string{
		"corral bench: 200 runs of /bin/true, parallel 8, parent heap 2 GiB, spawner process",
		"                 p50 µs   p90 µs   p99 µs   spawns/s",
		"corral             1500     1900     2500     1200.0",
		"bwrap              4100     4500     6000      500.0",
		"corral/bwrap      0.37x                        2.40x",
		"init peak RSS      6144 KiB",
		"idle RSS           5800 KiB, 1300 KiB private (mean of 2 ready inits)",
	}, lines)
}
