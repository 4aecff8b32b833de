package corral

import (
	"fmt"
	"os"

	"github.com/creack/pty"
)

// hostTerminal gives a command started without an init of corral's (the
// seatbelt rung, or unsandboxed) a pseudo-terminal of the host's as its
// standard streams, for Cmd.Terminal. It returns the caller's side, and
// what closes the command's side once the command has started.
func hostTerminal(req *startRequest) (*os.File, func(), error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, nil, &ExecError{Name: req.Name, Err: fmt.Errorf("a pseudo-terminal: %w", err)}
	}
	req.Stdio = [3]*os.File{slave, slave, slave}
	return master, func() { slave.Close() }, nil
}
