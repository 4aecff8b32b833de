package corral

import (
	"context"
	"sort"
	"testing"
	"time"
)

func TestWarmLatency(t *testing.T) {
	sb, _ := New(Config{Workspace: t.TempDir()})
	defer sb.Close()
	time.Sleep(300 * time.Millisecond)
	var d []time.Duration
	for range 30 {
		start := time.Now()
		if err := sb.Command(context.Background(), "/bin/true").Run(); err != nil {
			t.Fatal(err)
		}
		d = append(d, time.Since(start))
		time.Sleep(60 * time.Millisecond)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	t.Logf("p50 %v p10 %v p90 %v", d[15], d[3], d[27])
}
