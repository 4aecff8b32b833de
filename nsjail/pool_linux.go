package nsjail

import (
	"context"
	"sync"
	"time"
)

// pool keeps up to size sandboxes built and waiting for a command, so that
// starting one costs a message and a fork instead of a clone, a runtime
// start-up and a mount tree. Taking one builds its replacement in the
// background once the command taken for is done, or has run for
// refillDelay: a build takes a core for a few milliseconds, which a short
// command would otherwise share it with.
//
// Sandboxes nobody took for an idle timeout are reaped, and the pool stays
// empty until it is next used: a caller that went quiet holds no idle
// processes, and its next command pays one ordinary build.
type pool struct {
	build func() (*Process, error)
	ready chan *Process

	mu       sync.Mutex
	closed   bool
	building int           // refills under way, deferred ones included
	settled  chan struct{} // closed and replaced whenever building drops to 0
	hurry    chan struct{} // closed and replaced to start deferred refills now
	delay    time.Duration // refillDelay; longer in tests

	idle    time.Duration // 0: never reaped
	lastUse time.Time
	timer   *time.Timer // pending idle check, or nil
	reaped  bool        // emptied for idleness: refill on next use
	onReap  func()      // for tests: called after each reaping
}

func newPool(size int, build func() (*Process, error)) *pool {
	p := &pool{build: build, ready: make(chan *Process, size), settled: make(chan struct{}), hurry: make(chan struct{}), delay: refillDelay}
	for range size {
		p.refill()
	}
	return p
}

// reapAfter makes p reap its ready sandboxes once none was taken for d
// (never when d <= 0).
func (p *pool) reapAfter(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle = max(d, 0)
	p.used()
}

// used records a use and makes sure an idle check is pending. Called with
// mu held.
func (p *pool) used() {
	p.lastUse = time.Now()
	if p.idle > 0 && p.timer == nil && !p.closed && cap(p.ready) > 0 {
		p.timer = time.AfterFunc(p.idle, p.idleCheck)
	}
}

// idleCheck reaps the ready sandboxes when the pool was not used for its
// idle timeout, else checks again when it could be.
func (p *pool) idleCheck() {
	p.mu.Lock()
	if p.closed || p.reaped || p.idle <= 0 {
		p.timer = nil
		p.mu.Unlock()
		return
	}
	if left := p.idle - time.Since(p.lastUse); left > 0 {
		p.timer.Reset(left)
		p.mu.Unlock()
		return
	}
	p.timer = nil
	p.mu.Unlock()
	p.reap()
}

// reap kills the ready sandboxes, and those still being built as they
// finish, until the pool is next used.
func (p *pool) reap() {
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	p.drain()
	if p.onReap != nil {
		p.onReap()
	}
}

// wake refills a reaped pool. It reports whether the pool was reaped.
func (p *pool) wake() bool {
	p.mu.Lock()
	reaped := p.reaped && !p.closed
	p.reaped = false
	p.used()
	p.mu.Unlock()
	if reaped {
		for range cap(p.ready) {
			p.refill()
		}
	}
	return reaped
}

// take returns a ready sandbox, or nil when none is ready.
func (p *pool) take() *Process {
	if p.wake() {
		return nil
	}
	select {
	case s := <-p.ready:
		p.refillAfter(s.released)
		return s
	default:
		return nil
	}
}

// refillDelay is how long a command may run before the sandbox that
// replaces its own in the pool is built beside it.
const refillDelay = time.Second

// refill builds one sandbox in the background and parks it. A failure is
// dropped: the next Start builds its own sandbox and reports the error to
// its caller.
func (p *pool) refill() {
	p.mu.Lock()
	p.building++
	p.mu.Unlock()
	go p.fill()
}

// refillAfter is refill once done is closed, refillDelay has passed, or
// wait asks for the pool to be full, whichever comes first.
func (p *pool) refillAfter(done <-chan struct{}) {
	p.mu.Lock()
	p.building++
	hurry, delay := p.hurry, p.delay
	p.mu.Unlock()
	go func() {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		case <-hurry:
		}
		p.fill()
	}()
}

// fill builds a sandbox for a refill counted in building, and parks it.
func (p *pool) fill() {
	p.mu.Lock()
	stopped := p.closed || p.reaped
	p.mu.Unlock()
	var s *Process
	var err error
	if !stopped {
		s, err = p.build()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.building--; p.building == 0 {
		close(p.settled)
		p.settled = make(chan struct{})
	}
	if stopped || err != nil {
		return
	}
	if !p.closed && !p.reaped {
		select {
		case p.ready <- s:
			return
		default:
		}
	}
	s.Kill()
	s.release()
}

// wait blocks until no sandbox is being built: the pool is as full as it
// will get. Refills deferred for commands still running start now.
func (p *pool) wait(ctx context.Context) error {
	p.wake()
	p.mu.Lock()
	close(p.hurry)
	p.hurry = make(chan struct{})
	p.mu.Unlock()
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
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	close(p.hurry) // deferred refills end without building
	p.hurry = make(chan struct{})
	p.mu.Unlock()
	p.drain()
}

// drain kills every parked sandbox.
func (p *pool) drain() {
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
