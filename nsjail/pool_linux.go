package nsjail

import "sync"

// pool keeps up to size sandboxes built and waiting for a command, so that
// starting one costs a message and a fork instead of a clone, a runtime
// start-up and a mount tree. Taking one starts building its replacement in
// the background.
type pool struct {
	build func() (*Process, error)
	ready chan *Process

	mu     sync.Mutex
	closed bool
}

func newPool(size int, build func() (*Process, error)) *pool {
	p := &pool{build: build, ready: make(chan *Process, size)}
	for range size {
		go p.refill()
	}
	return p
}

// take returns a ready sandbox, or nil when none is ready.
func (p *pool) take() *Process {
	select {
	case s := <-p.ready:
		go p.refill()
		return s
	default:
		return nil
	}
}

// refill builds one sandbox and parks it. A failure is dropped: the next
// Start builds its own sandbox and reports the error to its caller.
func (p *pool) refill() {
	s, err := p.build()
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		select {
		case p.ready <- s:
			return
		default:
		}
	}
	s.Kill()
	s.release()
}

// close kills every parked sandbox and stops refilling.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		select {
		case s := <-p.ready:
			s.Kill()
			s.release()
		default:
			return
		}
	}
}
