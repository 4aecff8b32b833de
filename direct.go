package corral

import (
	"errors"
	"os"
	"os/exec"
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
	cmd.Stdin, cmd.Stdout, cmd.Stderr = req.Stdio[0], req.Stdio[1], req.Stdio[2]
	// Its own process group, so Kill reaches what it started as well.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, execError(req.Name, err)
	}
	return &directProcess{cmd: cmd}, nil
}

func (d *directBackend) close() error { return nil }

type directProcess struct{ cmd *exec.Cmd }

func (p *directProcess) OSProcess() *os.Process { return p.cmd.Process }

func (p *directProcess) Kill() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

func (p *directProcess) Wait() (syscall.WaitStatus, error) {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, err
	}
	return p.cmd.ProcessState.Sys().(syscall.WaitStatus), nil
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
