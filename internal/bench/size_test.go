package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1048576", 1 << 20},
		{"256MiB", 256 << 20},
		{"1GiB", 1 << 30},
		{"2GiB", 2 << 30},
		{"2gib", 2 << 30},
		{"2G", 2 << 30},
		{"512k", 512 << 10},
		{"1.5GiB", 3 << 29},
		{"1GB", 1e9},
		{"100MB", 1e8},
		{"7B", 7},
		{" 64 MiB ", 64 << 20},
		{"1TiB", 1 << 40},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseSizeRejects(t *testing.T) {
	for _, in := range []string{
		"", "-1", "-1GiB", "GiB", "1XB", "1e9", "abc", ".", "1..5GiB",
		"9223372036854775808", "8589934592GiB", "9e18GiB", "1.0e3",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := ParseSize(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "size ")
		})
	}
}

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{512 << 10, "512 KiB"},
		{256 << 20, "256 MiB"},
		{2 << 30, "2 GiB"},
		{3 << 29, "1.5 GiB"},
	} {
		assert.Equal(t, tc.want, FormatSize(tc.in))
	}
}
