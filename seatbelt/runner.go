//go:build unix

package seatbelt

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/corralhq/corral/internal/environ"
)

// Layer names the part of the runner that failed, in an [Error]. The root
// package reports each under the same name as corral.Layer.
type Layer string

// The layers the runner reports.
const (
	LayerSeatbelt Layer = "seatbelt" // sandbox-exec, or the profile it applies
	LayerTmp      Layer = "tmp"      // the command's private temporary directory
	LayerWorkdir  Layer = "workdir"  // the command's working directory ([Workdir])
)

// Layers lists every layer the runner reports.
func Layers() []Layer { return []Layer{LayerSeatbelt, LayerTmp, LayerWorkdir} }

// Error is a failure of the runner: the layer that failed and the path
// involved.
type Error struct {
	Layer Layer
	Path  string
	Err   error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %v", e.Layer, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Layer, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ProbeCommand is what the probes run under a profile.
const ProbeCommand = "/usr/bin/true"

// DoctorProfile allows everything: the doctor asks only whether
// sandbox-exec can apply a profile at all (it cannot, for one, inside
// another sandbox). NewRunner applies the real profile in its own probe.
const DoctorProfile = "(version 1)(allow default)"

// Runner runs each command through sandbox-exec under a profile generated
// for it. It is the darwin backend's engine; it builds on every unix so
// that everything but sandbox-exec itself is tested on Linux with a
// stand-in.
type Runner struct {
	path string // sandbox-exec, by absolute path
	in   Input  // TempDir is set per command
}

// NewRunner returns a runner of in's profile through path (sandbox-exec by
// its absolute path), once it has applied the profile to ProbeCommand in
// dir: a profile this macOS does not accept, or a caller that is itself
// sandboxed and may not be sandboxed again, fails here with the reason
// instead of failing every command with a status that looks like the
// command's own.
func NewRunner(path string, in Input, dir string) (*Runner, error) {
	r := &Runner{path: path, in: in}
	tmp, prof, err := r.prepare()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	stderr := &prefixBuffer{max: 4 << 10}
	cmd := &exec.Cmd{
		Path:   r.path,
		Args:   append([]string{r.path}, prof.Command(ProbeCommand)...),
		Env:    []string{},
		Dir:    dir,
		Stderr: stderr,
	}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		msg := strings.Join(strings.Fields(stderr.buf.String()), " ")
		return nil, &Error{Layer: LayerSeatbelt, Path: r.path, Err: fmt.Errorf("profile rejected (%v): %s", ee.ProcessState, msg)}
	case err != nil:
		return nil, &Error{Layer: LayerSeatbelt, Path: r.path, Err: err}
	}
	return r, nil
}

// prepare makes the command's private temporary directory and generates its
// profile. Protected paths are located now, per command, as the Linux
// backend checks them when each sandbox starts.
func (r *Runner) prepare() (string, *Profile, error) {
	dir, err := os.MkdirTemp("", "corral-")
	if err != nil {
		return "", nil, &Error{Layer: LayerTmp, Path: os.TempDir(), Err: err}
	}
	tmp, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, &Error{Layer: LayerTmp, Path: dir, Err: err}
	}
	in := r.in
	in.TempDir = tmp
	prof, err := Generate(in)
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, &Error{Layer: LayerSeatbelt, Err: err}
	}
	return tmp, prof, nil
}

// Command is one command to start: Path is the executable, already found;
// Args holds the command's name first, as in os/exec.
type Command struct {
	Path       string
	Args       []string
	Env        []string
	Dir        string
	Stdio      [3]*os.File // a nil one is the null device
	ExtraFiles []*os.File
	// Terminal makes Stdio[0], a terminal, the command's controlling one.
	Terminal bool
}

// Start starts c under its own profile, in a new session, with its own
// temporary directory as TMPDIR.
func (r *Runner) Start(c *Command) (*Process, error) {
	tmp, prof, err := r.prepare()
	if err != nil {
		return nil, err
	}
	var args []string
	if len(c.Args) > 1 {
		args = c.Args[1:]
	}
	cmd := &exec.Cmd{
		Path: r.path,
		Args: append([]string{r.path}, prof.Command(c.Path, args...)...),
		// The caller's TMPDIR lies outside the sandbox's writable paths.
		Env:         environ.Set(slices.Clone(c.Env), "TMPDIR="+tmp),
		Dir:         c.Dir,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Setctty: c.Terminal},
		ExtraFiles:  c.ExtraFiles,
	}
	// A nil file stays unset (the null device) rather than becoming a
	// non-nil interface holding nil.
	if c.Stdio[0] != nil {
		cmd.Stdin = c.Stdio[0]
	}
	if c.Stdio[1] != nil {
		cmd.Stdout = c.Stdio[1]
	}
	if c.Stdio[2] != nil {
		cmd.Stderr = c.Stdio[2]
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, &Error{Layer: LayerSeatbelt, Path: r.path, Err: err}
	}
	return &Process{cmd: cmd, tmp: tmp}, nil
}

// Process is a command started by sandbox-exec, which executes it in place:
// the pid is the command's own. Setsid made it the leader of a new session
// and process group, which is what Kill and Wait end. macOS has no PID
// namespace: a process that leaves the group (setsid, setpgid) escapes
// both, and nothing ends the command when the caller dies.
type Process struct {
	cmd *exec.Cmd
	tmp string
}

// OSProcess is the command's process.
func (p *Process) OSProcess() *os.Process { return p.cmd.Process }

// Kill ends the command's process group.
func (p *Process) Kill() error {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return p.cmd.Process.Kill()
	}
	return nil
}

// Wait waits for the command, then kills what it left running in its
// process group and removes its temporary directory. An unsuccessful exit
// is a status, not an error.
func (p *Process) Wait() (syscall.WaitStatus, *syscall.Rusage, error) {
	err := p.cmd.Wait()
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	os.RemoveAll(p.tmp)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, nil, err
	}
	ru, _ := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return p.cmd.ProcessState.Sys().(syscall.WaitStatus), ru, nil
}

// Check reports whether runner, sandbox-exec by its absolute path, exists
// and applies a profile to ProbeCommand, and why not when it does not:
// what the doctor reports.
func Check(runner string) (ok bool, why string) {
	fi, err := os.Stat(runner)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, runner + " not found"
	case err != nil:
		return false, err.Error()
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return false, runner + " is not executable"
	}
	stderr := &prefixBuffer{max: 4 << 10}
	cmd := &exec.Cmd{
		Path:   runner,
		Args:   []string{runner, "-p", DoctorProfile, "--", ProbeCommand},
		Env:    []string{},
		Stderr: stderr,
	}
	if err := cmd.Run(); err != nil {
		msg := strings.Join(strings.Fields(stderr.buf.String()), " ")
		if msg == "" {
			msg = err.Error()
		}
		return false, fmt.Sprintf("%s cannot apply a profile: %s", runner, msg)
	}
	return true, ""
}

// prefixBuffer keeps the first max bytes written and discards the rest.
type prefixBuffer struct {
	max int
	buf bytes.Buffer
}

func (b *prefixBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
