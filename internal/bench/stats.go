package bench

import (
	"math"
	"slices"
	"time"
)

// Latencies summarizes one series of spawn times.
type Latencies struct {
	P50, P90, P99 time.Duration
}

// summarize returns the percentiles of ds, which it leaves unchanged.
func summarize(ds []time.Duration) Latencies {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return Latencies{
		P50: percentile(sorted, 50),
		P90: percentile(sorted, 90),
		P99: percentile(sorted, 99),
	}
}

// percentile is the nearest-rank percentile p (1..100) of sorted: the
// smallest sample that at least p percent of the samples do not exceed. It
// always names a measured value, never an interpolation, and is 0 for no
// samples. Integer arithmetic keeps ranks exact (in floating point 0.29*100
// is 28.999999999999996).
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// micros is d in whole microseconds, rounded to nearest.
func micros(d time.Duration) int64 {
	return d.Round(time.Microsecond).Microseconds()
}

// ratio is a/b rounded to three decimals, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(a/b*1000) / 1000
}
