package nsjail

import (
	"context"
	"sync"
)

// pool keeps up to size sandboxes built and waiting for a command, so that
// starting one costs a message and a fork instead of a clone, a runtime
// start-up and a mount tree. Taking one starts building its replacement in
// the background.
type pool struct {
	build func() (*Process, error)
	ready chan *Process

	mu       sync.Mutex
	closed   bool
	building int           // refills under way
	settled  chan struct{} // closed and replaced whenever building drops to 0
}

func newPool(size int, build func() (*Process, error)) *pool {
	p := &pool{build: build, ready: make(chan *Process, size), settled: make(chan struct{})}
	for range size {
		p.refill()
	}
	return p
}

// take returns a ready sandbox, or nil when none is ready.
func (p *pool) take() *Process {
	select {
	case s := <-p.ready:
		p.refill()
		return s
	default:
		return nil
	}
}

// refill builds one sandbox in the background and parks it. A failure is
// dropped: the next Start builds its own sandbox and reports the error to
// its caller.
func (p *pool) refill() {
	p.mu.Lock()
	p.building++
	p.mu.Unlock()
	go func() {
		s, err := p.build()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.building--; p.building == 0 {
			close(p.settled)
			p.settled = make(chan struct{})
		}
		if err != nil {
			return
		}
		if !p.closed {
			select {
			case p.ready <- s:
				return
			default:
			}
		}
		s.Kill()
		s.release()
	}()
}

// wait blocks until no sandbox is being built: the pool is as full as it
// will get.
func (p *pool) wait(ctx context.Context) error {
	for {
		p.mu.Lock()
		building, settled := p.building, p.settled
		p.mu.Unlock()
		if building == 0 {
			return nil
		}
		select {
		case <-settled:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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

// first is the sandbox New starts building for a direct caller's first
// command. Such a caller is short-lived and keeps none ahead, but its first
// command need not wait for a whole build: the init starts up while the
// caller gets the command ready.
type first struct {
	once sync.Once // taken or closed
	done chan struct{}
	p    *Process // nil when the build failed
}

func startFirst(build func() (*Process, error)) *first {
	f := &first{done: make(chan struct{})}
	go func() {
		f.p, _ = build()
		close(f.done)
	}()
	return f
}

// take waits for the sandbox and returns it, to the first caller only. A
// failed build returns nil: the command builds its own and reports why.
func (f *first) take() *Process {
	taken := false
	f.once.Do(func() { taken = true })
	if !taken {
		return nil
	}
	<-f.done
	return f.p
}

// wait blocks until the sandbox is built.
func (f *first) wait(ctx context.Context) error {
	select {
	case <-f.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close kills the sandbox unless it was taken, once it is built, without
// waiting for that, as the pool does with a refill under way.
func (f *first) close() {
	f.once.Do(func() {
		go func() {
			<-f.done
			if f.p != nil {
				f.p.Kill()
				f.p.release()
			}
		}()
	})
}
