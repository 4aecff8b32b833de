package egress

import (
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity each relay pipe asks for: one splice moves at
// most this much. 256 KiB moves a loopback transfer as fast as io.Copy's
// 1 MiB does (docs/benchmarks.md), at a quarter of the cost against the
// user's pipe limit below.
const pipeSize = 256 << 10

// freePipes keeps a few empty pipes for the next transfer; more are closed.
var freePipes = make(chan *spipe, 8)

// spipe is a pipe between two splices: what pipeIn moved in, pipeOut moves out.
type spipe struct{ r, w int }

// spliceCopy copies src to dst until src ends, with splice(2) through a
// pipe: the kernel moves the bytes, as it does for io.Copy between two
// *net.TCPConn. Unlike io.Copy, which holds a pipe of 1 MiB for as long as
// the connection lasts, it holds one only while bytes are in it, and none
// while it waits for src. The kernel counts every pipe's capacity against
// its user's pipe-user-pages-soft (64 MiB by default), past which each new
// pipe of that user, the sandboxed commands' own included, gets 8 KiB:
// with io.Copy, some thirty idle tunnels would do that.
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
	var serr error
	rerr := rc.Read(func(fd uintptr) bool {
		if p == nil {
			if p, serr = getPipe(); serr != nil {
				return true
			}
		}
		var m int64
		for {
			m, serr = unix.Splice(int(fd), nil, p.w, nil, pipeSize, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
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
	if serr != nil {
		err = os.NewSyscallError("splice", serr)
	}
	if rerr != nil {
		err = rerr
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

func getPipe() (*spipe, error) {
	select {
	case p := <-freePipes:
		return p, nil
	default:
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	// Past the user's limits the kernel refuses; the pipe then keeps the
	// size it was given, which only makes each splice move less.
	unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, pipeSize)
	return &spipe{r: fds[0], w: fds[1]}, nil
}

// putPipe keeps p, which must be empty, for the next transfer, or closes
// it.
func putPipe(p *spipe) {
	select {
	case freePipes <- p:
	default:
		p.close()
	}
}

func (p *spipe) close() {
	unix.Close(p.r)
	unix.Close(p.w)
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
