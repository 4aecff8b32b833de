package corral

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// directBackend runs commands without any containment, for ModeDisabled.
type directBackend struct{ workspace string }

func (d *directBackend) start(req *startRequest) (process, error) {
	cmd := exec.Command(req.Name)
	cmd.Args = req.Args
	cmd.Env = req.Env
	cmd.Dir = req.Dir
	if cmd.Dir == "" {
		cmd.Dir = d.workspace
	}
	var master *os.File
	done := func() {}
	if req.terminal {
		var err error
		if master, done, err = hostTerminal(req); err != nil {
			return nil, err
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = req.Stdio[0], req.Stdio[1], req.Stdio[2]
	cmd.ExtraFiles = req.ExtraFiles
	// Its own process group, so Kill reaches what it started as well.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if req.terminal {
		// A session of its own, the terminal its controlling one; its
		// process group is the session's, so Kill still reaches it all.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	err := cmd.Start()
	done()
	if err != nil {
		if master != nil {
			master.Close()
		}
		return nil, execError(req.Name, err)
	}
	return &directProcess{cmd: cmd, terminal: master}, nil
}

func (d *directBackend) close() error { return nil }

type directProcess struct {
	cmd      *exec.Cmd
	terminal *os.File // Cmd.Terminal's caller side
	mu       sync.Mutex
	done     bool
}

func (p *directProcess) OSProcess() *os.Process { return p.cmd.Process }
func (p *directProcess) Terminal() *os.File     { return p.terminal }

// Kill kills the command's process group, until Wait has reaped the
// command: its pid (and so its group's id) may name a stranger after that.
func (p *directProcess) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return os.ErrProcessDone
	}
	return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

func (p *directProcess) Wait() (exit, error) {
	err := p.cmd.Wait()
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return exit{}, err
	}
	ru, _ := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return exit{status: p.cmd.ProcessState.Sys().(syscall.WaitStatus), rusage: ru}, nil
}

// execError classifies a failure to start name into ErrNotFound,
// ErrNotExecutable or the error itself.
func execError(name string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return &ExecError{Name: name, Err: ErrNotFound}
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EISDIR):
		return &ExecError{Name: name, Err: ErrNotExecutable}
	}
	return &ExecError{Name: name, Err: err}
}
