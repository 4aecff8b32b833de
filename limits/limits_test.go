package limits

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"512M", 512 << 20, ""},
		{"2G", 2 << 30, ""},
		{"64MiB", 64 << 20, ""},
		{"1.5g", 3 << 29, ""},
		{"4096", 4096, ""},
		{"0", 0, "more than zero"},
		{"-1M", 0, "want a size"},
		{"lots", 0, "want a size"},
		{"", 0, "want a size"},
	} {
		got, err := ParseSize(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestSizeRoundTrips(t *testing.T) {
	for _, b := range []int64{1, 1000, 1024, 64 << 20, 3 << 29, 2 << 30, 1 << 40} {
		back, err := ParseSize(Size(b))
		require.NoError(t, err)
		assert.Equal(t, b, back, Size(b))
	}
	assert.Equal(t, "512M", Size(512<<20))
}

func TestSetValueAndFlag(t *testing.T) {
	s := Set{Memory: 1 << 30, Pids: 512, CPUs: 1.5, TmpSize: 64 << 20, FileSize: 1 << 20, OpenFiles: 256, CPUTime: 30}
	want := map[Name]string{
		Memory: "1G", Pids: "512", CPUs: "1.5", TmpSize: "64M", FileSize: "1M", OpenFiles: "256", CPUTime: "30s",
	}
	for _, n := range Names() {
		assert.True(t, s.Has(n), n)
		assert.Equal(t, want[n], s.Value(n), n)
		assert.False(t, s.Without(n).Has(n), n)
		assert.Equal(t, "", Set{}.Value(n), n)
	}
	assert.Equal(t, "--pids 512", s.Flag(Pids))
}
