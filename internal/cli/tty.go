package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// ttyBridge joins the terminal a command of `corral run -t` gets (a
// pseudo-terminal made in the sandbox, its controlling terminal; see
// corral.Cmd.Terminal) to the caller's standard input and output. The
// caller's terminal is in raw mode meanwhile, so its keys (Ctrl-C, Ctrl-Z)
// reach the command's terminal, which turns them into signals for the
// command's foreground job. The caller's own terminal never enters the
// sandbox: what the command does to its terminal ends with it.
type ttyBridge struct {
	master  *os.File
	restore func()
	copied  chan struct{} // closed once the command's output is all out
}

// bridgeTTY starts the bridge to master, the command's terminal's other
// side, sized as the caller's terminal.
func bridgeTTY(master *os.File) (*ttyBridge, error) {
	b := &ttyBridge{master: master, copied: make(chan struct{})}
	b.resize()
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		st, err := term.MakeRaw(fd)
		if err != nil {
			return nil, fmt.Errorf("--tty: raw mode: %w", err)
		}
		b.restore = func() { term.Restore(fd, st) }
	}
	go io.Copy(master, os.Stdin)
	go func() {
		io.Copy(os.Stdout, master) // until the last process holding the terminal is gone
		close(b.copied)
	}()
	return b, nil
}

// resize gives the command's terminal the caller's size (on SIGWINCH too):
// the kernel then signals the command's foreground job.
func (b *ttyBridge) resize() {
	if term.IsTerminal(int(os.Stdin.Fd())) {
		pty.InheritSize(os.Stdin, b.master)
	}
}

// finish, once the command and its sandbox are gone, waits for what the
// command wrote last to be copied out, then gives the caller's terminal
// back as it was.
func (b *ttyBridge) finish() {
	select {
	case <-b.copied:
	case <-time.After(2 * time.Second): // nothing in the sandbox is left to write
	}
	b.master.Close()
	if b.restore != nil {
		b.restore()
	}
}

// wantsTTY reports whether `corral run` gives the command a terminal: as
// --tty says, and without it when standard input, output and error are all
// terminals, as a person at one runs it (a redirection, such as 2>FILE,
// keeps the command's streams apart).
func wantsTTY(flag *bool) bool {
	if flag != nil {
		return *flag
	}
	for _, f := range []*os.File{os.Stdin, os.Stdout, os.Stderr} {
		if !term.IsTerminal(int(f.Fd())) {
			return false
		}
	}
	return true
}
