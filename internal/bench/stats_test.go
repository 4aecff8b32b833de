package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// ms makes a series of durations from millisecond counts.
func ms(vals ...int) []time.Duration {
	out := make([]time.Duration, len(vals))
	for i, v := range vals {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestPercentileNearestRank(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample is every percentile", ms(7), 99, 7 * time.Millisecond},
		{"p50 of two is the lower", ms(1, 2), 50, 1 * time.Millisecond},
		{"p50 of odd count is the middle", ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"p90 of ten", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{"p99 of ten is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p29 of a hundred is exact", ms(hundred...), 29, 29 * time.Millisecond},
		{"p99 of a hundred", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 is the max", ms(1, 2, 3), 100, 3 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, percentile(tc.sorted, tc.p))
		})
	}
}

func TestSummarizeSortsACopy(t *testing.T) {
	in := ms(5, 1, 4, 2, 3)
	got := summarize(in)
	assert.Equal(t, Latencies{P50: 3 * time.Millisecond, P90: 5 * time.Millisecond, P99: 5 * time.Millisecond}, got)
	assert.Equal(t, ms(5, 1, 4, 2, 3), in)
}

func TestMicrosAndRatio(t *testing.T) {
	assert.Equal(t, int64(1235), micros(1234500*time.Nanosecond))
	assert.Equal(t, int64(1234), micros(1234499*time.Nanosecond))
	assert.Equal(t, 0.5, ratio(1, 2))
	assert.Equal(t, 0.333, ratio(1, 3))
	assert.Equal(t, 0.0, ratio(1, 0))
}
