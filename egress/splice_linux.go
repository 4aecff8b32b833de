package egress

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// The pipes of the relay. A splice moves at most a pipe's capacity, and
// the larger the pipe, the fewer splices a transfer takes and the larger
// the packets it sends: 64 KiB pipes cost 1.2 times the CPU per byte of
// 1 MiB ones, io.Copy's size, over 64 connections (docs/bench/2026-11-24.md).
// But the kernel counts each pipe's capacity against its user's
// pipe-user-pages-soft (64 MiB by default), past which each new pipe of
// that user, the sandboxed commands' own included, gets 8 KiB. So where
// the kernel counts this process's pipes, at most a quarter of that limit
// goes to big pipes, and the transfers in flight beyond get the kernel's
// default (64 KiB).
const bigPipeSize = 1 << 20

var (
	bigOpen   atomic.Int64                 // big pipes open, free ones included
	freePipes = make(chan *spipe, 8)       // empty big pipes, for the next transfer
	bigBudget = sync.OnceValue(pipeBudget) // how many may be open; -1 any number
)

// pipeBudget is how many big pipes may be open at once: any number when
// the kernel does not count this process's pipes (it holds CAP_SYS_RESOURCE
// or CAP_SYS_ADMIN, or there is no soft limit), else a quarter of the
// soft limit's worth.
func pipeBudget() int {
	soft, err := os.ReadFile("/proc/sys/fs/pipe-user-pages-soft")
	if err != nil {
		return 0
	}
	pages, err := strconv.Atoi(strings.TrimSpace(string(soft)))
	if err != nil {
		return 0
	}
	if pages == 0 || privilegedPipes() {
		return -1
	}
	return pages / 4 / (bigPipeSize / os.Getpagesize())
}

// privilegedPipes reports whether this process holds CAP_SYS_RESOURCE or
// CAP_SYS_ADMIN, which exempt its pipes from the user's limits.
func privilegedPipes() bool {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(status)) {
		if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SYS_RESOURCE|1<<unix.CAP_SYS_ADMIN) != 0
		}
	}
	return false
}

// spipe is a pipe between two splices: what pipeIn moved in, pipeOut
// moves out.
type spipe struct {
	r, w int
	big  bool // counted in bigOpen
}

// spliceCopy copies src to dst until src ends, with splice(2) through a
// pipe: the kernel moves the bytes, as it does for io.Copy between two
// *net.TCPConn. Unlike io.Copy, which holds a pipe of 1 MiB for as long as
// the connection lasts, it holds one only while bytes are in it, and none
// while it waits for src: with io.Copy, 32 idle tunnels would put the
// caller's user past its pipe limit (see above).
func spliceCopy(dst, src *net.TCPConn) (int64, error) {
	rc, err := src.SyscallConn()
	if err != nil {
		return 0, err
	}
	wc, err := dst.SyscallConn()
	if err != nil {
		return 0, err
	}
	var written int64
	for {
		p, n, err := pipeIn(rc)
		if err != nil || n == 0 {
			return written, err
		}
		m, err := pipeOut(wc, p, n)
		written += int64(m)
		if err != nil {
			p.close() // it may hold bytes still
			return written, err
		}
		putPipe(p)
	}
}

// pipeIn waits until src has bytes, then takes a pipe and moves them into
// it. n 0 is the end of src; then, and on an error, no pipe is returned.
func pipeIn(rc syscall.RawConn) (p *spipe, n int, err error) {
	var serr, perr error
	rerr := rc.Read(func(fd uintptr) bool {
		if p == nil {
			if p, perr = getPipe(); perr != nil {
				return true
			}
		}
		var m int64
		for {
			m, serr = unix.Splice(int(fd), nil, p.w, nil, bigPipeSize, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			if serr != unix.EINTR {
				break
			}
		}
		if serr == unix.EAGAIN {
			// Nothing to read (the pipe is empty: pipeOut emptied it).
			// Wait without holding the pipe.
			putPipe(p)
			p = nil
			return false
		}
		n = int(m)
		return true
	})
	switch {
	case rerr != nil:
		err = rerr
	case perr != nil:
		err = perr
	case serr != nil:
		err = os.NewSyscallError("splice", serr)
	}
	if err != nil || n == 0 {
		if p != nil {
			putPipe(p) // empty: nothing was moved into it
		}
		return nil, 0, err
	}
	return p, n, nil
}

// pipeOut moves the n bytes in p to dst, waiting while dst is full.
func pipeOut(wc syscall.RawConn, p *spipe, n int) (written int, err error) {
	var serr error
	werr := wc.Write(func(fd uintptr) bool {
		for written < n {
			m, e := unix.Splice(p.r, nil, int(fd), nil, n-written, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			switch {
			case e == unix.EINTR:
				continue
			case e == unix.EAGAIN:
				return false
			case e != nil:
				serr = os.NewSyscallError("splice", e)
				return true
			case m == 0:
				serr = io.ErrNoProgress
				return true
			}
			written += int(m)
		}
		return true
	})
	if werr != nil {
		return written, werr
	}
	return written, serr
}

// getPipe returns an empty pipe: a free one, a new big one within the
// budget, else a new one of the kernel's default size.
func getPipe() (*spipe, error) {
	select {
	case p := <-freePipes:
		return p, nil
	default:
	}
	big := bigOpen.Add(1) <= int64(bigBudget()) || bigBudget() < 0
	if !big {
		bigOpen.Add(-1)
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		if big {
			bigOpen.Add(-1)
		}
		return nil, os.NewSyscallError("pipe2", err)
	}
	if big {
		// Past the user's limits the kernel refuses; the pipe then
		// keeps the size it was given, which only makes each splice
		// move less.
		unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, bigPipeSize)
	}
	return &spipe{r: fds[0], w: fds[1], big: big}, nil
}

// putPipe keeps p, which must be empty, for the next transfer when it is
// a big one and few are free, else closes it.
func putPipe(p *spipe) {
	if p.big {
		select {
		case freePipes <- p:
			return
		default:
		}
	}
	p.close()
}

func (p *spipe) close() {
	unix.Close(p.r)
	unix.Close(p.w)
	if p.big {
		bigOpen.Add(-1)
	}
}

// copyConn copies src to dst until src ends: with spliceCopy between two
// TCP connections, else io.Copy.
func copyConn(dst, src net.Conn) (int64, error) {
	d, ok1 := dst.(*net.TCPConn)
	s, ok2 := src.(*net.TCPConn)
	if ok1 && ok2 {
		return spliceCopy(d, s)
	}
	return io.Copy(dst, src)
}
