//go:build unix

package corral

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/corralhq/corral/internal/environ"
	"github.com/corralhq/corral/seatbelt"
)

// seatbeltBackend runs each command through sandbox-exec under a profile
// generated for it. It is the darwin backend; it builds on every unix so
// that everything but sandbox-exec itself is tested on Linux with a
// stand-in runner.
type seatbeltBackend struct {
	runner    string // sandbox-exec, by absolute path
	spec      *spec
	protected []string
}

// seatbeltOrNone is the macOS ladder as New climbs it: the seatbelt rung, or
// when sandbox-exec cannot apply the profile and Fallback is warn, commands
// run unsandboxed after one line through Logf.
func seatbeltOrNone(s *spec, runner string) (backend, error) {
	b, err := newSeatbeltBackend(s, runner)
	if err == nil {
		return b, nil
	}
	missing := LayerStatus{Name: LayerSeatbelt, Reason: err.Error()}
	var se *SetupError
	if errors.As(err, &se) && se.Layer == LayerSeatbelt {
		missing.Reason = se.Err.Error()
	}
	plan, cerr := chooseSeatbelt(&host{seatbelt: true, layers: []LayerStatus{missing}}, s.needs())
	if cerr != nil {
		return nil, err
	}
	if s.logf != nil {
		s.logf("%s", plan.warning())
	}
	return &directBackend{workspace: s.Workspace}, nil
}

func newSeatbeltBackend(s *spec, runner string) (*seatbeltBackend, error) {
	b := &seatbeltBackend{runner: runner, spec: s, protected: protectedNames(s.AllowPlanting)}
	if err := b.probe(); err != nil {
		return nil, err
	}
	return b, nil
}

// probe applies a profile once, to /usr/bin/true. A profile this macOS does
// not accept, or a caller that is itself sandboxed and may not be sandboxed
// again, then fails New with the reason instead of failing every command
// with a status that looks like the command's own.
func (b *seatbeltBackend) probe() error {
	tmp, prof, err := b.prepare()
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	stderr := &prefixBuffer{max: 4 << 10}
	cmd := &exec.Cmd{
		Path:   b.runner,
		Args:   append([]string{b.runner}, prof.Command(probeCommand)...),
		Env:    []string{},
		Dir:    b.spec.Workspace,
		Stderr: stderr,
	}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		msg := strings.Join(strings.Fields(stderr.buf.String()), " ")
		return &SetupError{Layer: LayerSeatbelt, Path: b.runner, Err: fmt.Errorf("profile rejected (%v): %s", ee.ProcessState, msg)}
	case err != nil:
		return &SetupError{Layer: LayerSeatbelt, Path: b.runner, Err: err}
	}
	return nil
}

// prepare makes the command's private temporary directory and generates its
// profile. Protected paths are located now, per command, as the Linux
// backend checks them when each sandbox starts.
func (b *seatbeltBackend) prepare() (string, *seatbelt.Profile, error) {
	dir, err := os.MkdirTemp("", "corral-")
	if err != nil {
		return "", nil, &SetupError{Layer: LayerTmp, Path: os.TempDir(), Err: err}
	}
	tmp, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, &SetupError{Layer: LayerTmp, Path: dir, Err: err}
	}
	prof, err := seatbelt.Generate(b.input(tmp))
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, &SetupError{Layer: LayerSeatbelt, Err: err}
	}
	return tmp, prof, nil
}

func (b *seatbeltBackend) input(tmp string) seatbelt.Input {
	s := b.spec
	return seatbelt.Input{
		Workspace:   s.Workspace,
		Writable:    s.Writable,
		ReadOnly:    s.ReadOnly,
		Hidden:      s.Hidden,
		Protected:   b.protected,
		TempDir:     tmp,
		NetworkNone: s.Network == NetworkNone,
		Locate:      seatbelt.LocateProtected,
	}
}

func (b *seatbeltBackend) start(req *startRequest) (process, error) {
	dir, err := b.workdir(req.Dir)
	if err != nil {
		return nil, err
	}
	path, err := lookPath(req.Name, dir, req.Env, b.spec.Hidden)
	if err != nil {
		return nil, &ExecError{Name: req.Name, Err: err}
	}
	tmp, prof, err := b.prepare()
	if err != nil {
		return nil, err
	}
	var args []string
	if len(req.Args) > 1 {
		args = req.Args[1:]
	}
	cmd := &exec.Cmd{
		Path: b.runner,
		Args: append([]string{b.runner}, prof.Command(path, args...)...),
		// The caller's TMPDIR lies outside the sandbox's writable paths.
		Env:         environ.Set(slices.Clone(req.Env), "TMPDIR="+tmp),
		Dir:         dir,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	setStdio(cmd, req.Stdio)
	cmd.ExtraFiles = req.ExtraFiles
	if err := cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, &SetupError{Layer: LayerSeatbelt, Path: b.runner, Err: err}
	}
	return &seatbeltProcess{cmd: cmd, tmp: tmp}, nil
}

// workdir returns the command's working directory: the workspace, or dir
// relative to it, which must be an existing directory.
func (b *seatbeltBackend) workdir(dir string) (string, error) {
	switch {
	case dir == "":
		dir = b.spec.Workspace
	case !filepath.IsAbs(dir):
		dir = filepath.Join(b.spec.Workspace, dir)
	}
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", &SetupError{Layer: LayerWorkdir, Path: dir, Err: err}
	}
	return dir, nil
}

// setStdio hands the command its three files; a nil one stays unset (the
// null device) rather than becoming a non-nil interface holding nil.
func setStdio(cmd *exec.Cmd, stdio [3]*os.File) {
	if stdio[0] != nil {
		cmd.Stdin = stdio[0]
	}
	if stdio[1] != nil {
		cmd.Stdout = stdio[1]
	}
	if stdio[2] != nil {
		cmd.Stderr = stdio[2]
	}
}

func (b *seatbeltBackend) close() error { return nil }

// seatbeltProcess is a command started by sandbox-exec, which executes it in
// place: the pid is the command's own. Setsid made it the leader of a new
// session and process group, which is what Kill and Wait end. macOS has no
// PID namespace: a process that leaves the group (setsid, setpgid) escapes
// both, and nothing ends the command when the caller dies.
type seatbeltProcess struct {
	cmd *exec.Cmd
	tmp string
}

func (p *seatbeltProcess) OSProcess() *os.Process { return p.cmd.Process }

func (p *seatbeltProcess) Kill() error {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return p.cmd.Process.Kill()
	}
	return nil
}

// Wait waits for the command, then kills what it left running in its
// process group and removes its temporary directory.
func (p *seatbeltProcess) Wait() (exit, error) {
	err := p.cmd.Wait()
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	os.RemoveAll(p.tmp)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return exit{}, err
	}
	ru, _ := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return exit{status: p.cmd.ProcessState.Sys().(syscall.WaitStatus), rusage: ru}, nil
}
