package nsjail

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/limits"
	"github.com/corralhq/corral/seccomp"
)

// execLimit puts the memory and pids limits on the command's first process
// at its first exec, stopped in the init's listener before the kernel loads the
// program: the command runs no instruction without it, and the init, which
// the limit would otherwise bind too, stays free of it (a Go process maps
// its heap in 64 MiB arenas, and could not live under a small limit).
//
// The first exec stopped is the command's: until the init's fork returns,
// the child it forked is the only process in the sandbox, and the init
// never execs. Its pid stays its own while the limit is set: it is checked
// to be still stopped (seccomp.Valid) under mu, and the init reaps it only
// after settle, which takes mu.
//
// The pids limit is set here so that it counts the command's tasks alone:
// RLIMIT_NPROC counts the init's threads too, and the init, free of the
// limit itself, adds to the command's limit the threads it has at that
// moment (limits.ApplyTasks).
type execLimit struct {
	memory int64
	pids   int64

	mu      sync.Mutex
	settled bool  // the first exec was seen, or the fork has returned
	err     error // why the limit could not be set
}

// atExec sets the limit on the process stopped at n, when n is the first
// exec; false when it could not, and the exec must fail.
func (e *execLimit) atExec(fd int, n seccomp.Notification) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.settled {
		return true
	}
	e.settled = true
	if e.err != nil {
		return false // the shared memory filter could not be loaded
	}
	if !seccomp.Valid(fd, n.ID) {
		return true // killed while it waited: it runs nothing
	}
	if e.memory > 0 {
		if err := limits.ApplyMemory(n.Pid, e.memory); err != nil {
			e.err = err
			return false
		}
	}
	if e.pids > 0 {
		if err := limits.ApplyTasks(n.Pid, e.pids); err != nil {
			e.err = err
			return false
		}
	}
	return true
}

// settle ends the limit's work once the init's fork has returned: the first
// process has exec'd or is gone. It returns why the limit could not be
// set, if it could not.
func (e *execLimit) settle() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settled = true
	return e.err
}

// serveExec answers an exec stopped for the limits alone; it leaves to the
// read side, when reads are watched, an exec the limit lets go on.
func (l *listener) serveExec(n seccomp.Notification) bool {
	if l.limit == nil || !seccomp.IsExec(n.Nr) {
		return false
	}
	if n.Pid != l.initTid && !l.limit.atExec(l.fd, n) {
		seccomp.Fail(l.fd, n.ID, unix.EPERM)
		return true
	}
	if l.reads != nil {
		return false
	}
	seccomp.Continue(l.fd, n.ID)
	return true
}

// serveAlso answers the calls a listener stops beyond the write calls
// (seccomp.Also): the execs, for the memory and pids limits, and the reads, for the
// report. It returns false for a call that is none of them.
func (l *listener) serveAlso(n seccomp.Notification) bool {
	return l.serveExec(n) || l.reads != nil && l.serveRead(n)
}

// alsoOf is what the listener of the command started from s stops beyond
// the write calls: the execs for a memory or pids limit (limitsAtExec), and
// with a report of reads (execReq.Reads) every read by name when a path is
// hidden.
func alsoOf(s *setup, report bool) seccomp.Also {
	return seccomp.Also{Reads: report && s.reportReads && watchesReads(s), Execs: limitsAtExec(s)}
}

// limitsAtExec reports whether s has a limit the listener sets on the
// command at its first exec: memory, and pids where RLIMIT_NPROC counts
// the sandbox's tasks alone (setup.PidsRlimit) and the limit is to count
// the command's alone (setup.PidsExact).
func limitsAtExec(s *setup) bool {
	return s.Limits.Memory > 0 || pidsAtExec(s)
}

func pidsAtExec(s *setup) bool { return s.Limits.Pids > 0 && s.PidsRlimit && s.PidsExact }

// answer readies l to answer what a stops.
func (l *listener) answer(s *setup, a seccomp.Also) {
	if a.Reads {
		l.reads = seccomp.ReadCalls()
	}
	if a.Execs {
		l.limit = &execLimit{memory: s.Limits.Memory, err: sharedMemoryErr}
		if pidsAtExec(s) {
			l.limit.pids = s.Limits.Pids
			warmThreads(spareThreads)
		}
	}
}

// withExecLimit has watch, when it loads nothing, load instead a listener
// of the execs alone when s has a memory or pids limit: it goes in before
// the policy's filter, which refuses loading another. Where neither loads,
// the init applies those limits to itself (limitsOfInit).
func withExecLimit(s *setup, watch func(policy []byte) bool) func(policy []byte) bool {
	if !limitsAtExec(s) {
		return watch
	}
	return func(policy []byte) bool {
		sharedMemoryFilter(s)
		if watch != nil && watch(policy) {
			return true
		}
		s.listener = listenForExecs(s)
		return false
	}
}

// listenForExecs loads a listener that stops the command's execs only,
// for the memory and pids limits; nil when the kernel cannot.
//
// Preconditions: must be called with the OS thread locked, by confine.
func listenForExecs(s *setup) *listener {
	prog, err := seccomp.ExecProgram()
	if err != nil {
		return nil
	}
	fd, err := seccomp.LoadListener(prog)
	if err != nil {
		return nil
	}
	l := newListener(fd, nil, judge{})
	l.answer(s, alsoOf(s, false))
	go l.run()
	return l
}

// limitsOfInit are the limits the init sets on itself before it starts
// the command, which inherits them: all but the memory and pids limits its
// listener sets on the command alone.
func limitsOfInit(s *setup) limits.Set {
	set := s.Limits
	if l := s.listener; l != nil && l.limit != nil {
		set = set.Without(limits.Memory)
		if l.limit.pids > 0 {
			set = set.Without(limits.Pids)
		}
	}
	return set
}

// forked tells the listener the init's fork of the command has returned,
// and returns why the command's limits could not be set, if so.
func (l *listener) forked() error {
	if l == nil || l.limit == nil {
		return nil
	}
	return l.limit.settle()
}

// spareThreads is how many threads warmThreads leaves the init idle: more
// than it blocks in system calls at once once the command runs (the wait
// for the command, the mount watch, the signal forwarder, the listener
// and its answers).
const spareThreads = 8

// warmThreads has the Go runtime start n threads more than it runs now, and
// leaves them idle: the runtime keeps an idle thread for the next goroutine
// that needs one and never ends it, so the init does not start threads
// while the command runs. Those would count against the command's pids
// limit (limits.ApplyTasks counts the init's threads when the command
// starts), and take from the command what it was given.
//
// Each goroutine holds a thread of its own while it is locked to it and
// waits: n of them at once are n threads, with no timing involved.
func warmThreads(n int) {
	var locked sync.WaitGroup
	release := make(chan struct{})
	locked.Add(n)
	for range n {
		go func() {
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread() // the thread stays, idle
		}()
	}
	locked.Wait()
	close(release)
}
