package nsjail

import (
	"os"

	"golang.org/x/sys/unix"
)

// proxyListeners opens the two listening TCP sockets of a sandbox with
// NetProxy (the HTTP proxy's, then the SOCKS5 proxy's) on 127.0.0.1 of the
// sandbox's network namespace, which has only loopback. The kernel picks
// each port among the ephemeral ones, so that the ports a command wants
// for its own servers stay free (a command binding a fixed port of that
// range may still meet one); the caller names them in the command's
// environment. A socket keeps the namespace it was made in: the caller
// accepts on it from outside and dials out from its own.
//
// The sockets are close-on-exec and without SO_REUSEPORT: the command can
// neither inherit them nor bind beside them.
func proxyListeners() ([]*os.File, error) {
	var files []*os.File
	for _, name := range []string{"corral-http-proxy", "corral-socks5-proxy"} {
		f, err := listenLoopback(name)
		if err != nil {
			closeFiles(files)
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

func listenLoopback(name string) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	sa := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("listen", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}
