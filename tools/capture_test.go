package tools

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestCapture(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		input   string
		want    string
		wantCut int64
	}{
		{"empty", 10, "", "", 0},
		{"short", 10, "hello", "hello", 0},
		{"exactly the limit", 10, "0123456789", "0123456789", 0},
		{"one over", 10, "0123456789X", "01234" + truncationMarker(1) + "6789X", 1},
		{"long", 10, "0123456789abcdefghij", "01234" + truncationMarker(10) + "fghij", 10},
		{"odd limit keeps more tail", 5, "0123456789", "01" + truncationMarker(5) + "789", 5},
		{"zero limit keeps nothing", 0, "abc", truncationMarker(3), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{1, 3, 1 << 20} {
				c := newCapture(tt.limit)
				writeChunks(c, tt.input, chunk)
				got, cut := c.result()
				assert.Equal(t, tt.want, got, "chunk size %d", chunk)
				assert.Equal(t, tt.wantCut, cut, "chunk size %d", chunk)
			}
		})
	}
}

func TestCaptureKeepsUTF8Whole(t *testing.T) {
	// Each "é" is two bytes, so an even split lands inside one.
	input := strings.Repeat("é", 100)
	for _, limit := range []int{7, 9, 10, 11, 31} {
		c := newCapture(limit)
		writeChunks(c, input, 3)
		got, cut := c.result()
		assert.True(t, utf8.ValidString(got), "limit %d: %q", limit, got)
		head, tail, ok := strings.Cut(got, truncationMarker(cut))
		assert.True(t, ok, "limit %d: marker missing", limit)
		assert.Equal(t, int64(len(input)), int64(len(head)+len(tail))+cut, "limit %d: bytes accounted for", limit)
	}
}

func TestCaptureBoundsMemory(t *testing.T) {
	c := newCapture(64)
	chunk := strings.Repeat("x", 4096)
	for range 1000 {
		c.Write([]byte(chunk))
	}
	assert.LessOrEqual(t, cap(c.head)+cap(c.tail), 256)
	_, cut := c.result()
	assert.Equal(t, int64(4096*1000-64), cut)
}

func writeChunks(c *capture, s string, size int) {
	for len(s) > 0 {
		n := min(size, len(s))
		c.Write([]byte(s[:n]))
		s = s[n:]
	}
}
