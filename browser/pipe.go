package browser

import (
	"bufio"
	"io"
	"sync"
)

// pipe is Chromium's end of --remote-debugging-pipe: JSON messages, each
// ended by a NUL byte, written to its descriptor 3 and read from its 4.
type pipe struct {
	mu sync.Mutex // serializes writes: a message is written whole
	w  io.WriteCloser
	r  *bufio.Reader
}

func newPipe(w io.WriteCloser, r io.Reader) *pipe {
	return &pipe{w: w, r: bufio.NewReaderSize(r, 1<<16)}
}

// send writes one message.
func (p *pipe) send(msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.w.Write(append(msg, 0)); err != nil {
		return err
	}
	return nil
}

// recv reads the next message, without its NUL.
func (p *pipe) recv() ([]byte, error) {
	b, err := p.r.ReadBytes(0)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}
