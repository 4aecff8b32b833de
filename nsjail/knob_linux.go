package nsjail

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// The init reads and writes its /proc files with plain system calls: the
// first os.File a Go program opens starts the runtime's network poller (an
// epoll instance and an eventfd, then an epoll_ctl for every file opened and
// epoll waits in its scheduler), which an init that touches no socket
// through the os package never needs.

// writeKnob writes data to the existing file path (a /proc knob).
func writeKnob(path string, data []byte) error {
	fd, err := openRetry(path, unix.O_WRONLY|unix.O_CLOEXEC)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	n, err := writeRetry(fd, data)
	if err == nil && n < len(data) {
		err = unix.EIO
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// readKnob reads the small file path (a /proc knob) whole.
func readKnob(path string) ([]byte, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var out []byte
	buf := make([]byte, 512)
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func writeRetry(fd int, data []byte) (int, error) {
	for {
		n, err := unix.Write(fd, data)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// openFds lists this process's open descriptors.
func openFds() []int {
	d, err := openRetry("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil
	}
	defer unix.Close(d)
	var names []string
	buf := make([]byte, 4096)
	for {
		n, err := unix.ReadDirent(d, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	var fds []int
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd != d {
			fds = append(fds, fd)
		}
	}
	return fds
}
