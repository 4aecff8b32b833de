package tools

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// capture keeps the first and last bytes a stream writes and counts the
// rest, so a command that prints gigabytes costs a bounded amount of memory
// and the model still sees how the output began and how it ended.
type capture struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte // a ring once full; next is where the oldest byte is
	next  int
	total int64
	hmax  int
	tmax  int
}

// newCapture keeps at most limit bytes: half from the start, half from the
// end.
func newCapture(limit int) *capture {
	h := limit / 2
	return &capture{hmax: h, tmax: limit - h}
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := c.hmax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	c.writeTail(p)
	return n, nil
}

func (c *capture) writeTail(p []byte) {
	if c.tmax == 0 {
		return
	}
	if len(p) >= c.tmax {
		c.tail = append(c.tail[:0], p[len(p)-c.tmax:]...)
		c.next = 0
		return
	}
	if room := c.tmax - len(c.tail); room > 0 {
		k := min(room, len(p))
		c.tail = append(c.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(c.tail[c.next:], p)
		p = p[k:]
		c.next = (c.next + k) % c.tmax
	}
}

// result returns the kept text and how many bytes were cut from its middle.
// When bytes were cut, the text carries a marker saying how many, and the
// cut points are moved off UTF-8 sequences so no character is split.
func (c *capture) result() (string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := append(append([]byte(nil), c.tail[c.next:]...), c.tail[:c.next]...)
	kept := int64(len(c.head) + len(tail))
	if kept == c.total {
		return string(c.head) + string(tail), 0
	}
	head := trimIncompleteEnd(c.head)
	tail = trimIncompleteStart(tail)
	cut := c.total - int64(len(head)) - int64(len(tail))
	return string(head) + truncationMarker(cut) + string(tail), cut
}

func truncationMarker(cut int64) string {
	return fmt.Sprintf("\n[... %d bytes truncated ...]\n", cut)
}

// trimIncompleteEnd drops a UTF-8 sequence cut short at the end of b.
func trimIncompleteEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		r := b[len(b)-i]
		if !utf8.RuneStart(r) {
			continue
		}
		if !utf8.FullRune(b[len(b)-i:]) {
			return b[:len(b)-i]
		}
		break
	}
	return b
}

// trimIncompleteStart drops continuation bytes at the start of b, the rest of
// a character whose beginning was cut.
func trimIncompleteStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}

// Capture is the head-and-tail capture Shell and Exec put on stdout and
// stderr, for tools whose output comes from elsewhere (a diff, a listing):
// it keeps the first and last bytes up to a limit and marks the cut.
type Capture struct{ c *capture }

// NewCapture keeps at most limit bytes of what is written to it.
func NewCapture(limit int) *Capture { return &Capture{c: newCapture(limit)} }

// Write keeps what fits and counts the rest; it never fails.
func (c *Capture) Write(p []byte) (int, error) { return c.c.Write(p) }

// String returns the kept text, with a marker where the middle was cut.
func (c *Capture) String() string {
	s, _ := c.c.result()
	return s
}
