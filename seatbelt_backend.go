//go:build unix

package corral

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/seatbelt"
)

// seatbeltBackend runs each command through the seatbelt package's runner
// (sandbox-exec under a profile generated for it). It is the darwin
// backend; it builds on every unix so that everything but sandbox-exec
// itself is tested on Linux with a stand-in runner.
type seatbeltBackend struct {
	runner *seatbelt.Runner
	spec   *spec
	// proxy serves NetworkAllow's commands on the host's loopback, the
	// only place the profile lets them connect to.
	proxy *hostProxy
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
	plan, cerr := choose(&ladder.Host{Seatbelt: true, Layers: []LayerStatus{missing}}, s.needs())
	if cerr != nil {
		return nil, err
	}
	if s.logf != nil {
		s.logf("%s", plan.Warning())
	}
	return &directBackend{workspace: s.Workspace}, nil
}

// newSeatbeltBackend makes the runner, which applies the profile once.
func newSeatbeltBackend(s *spec, runner string) (*seatbeltBackend, error) {
	b := &seatbeltBackend{spec: s}
	in := seatbeltInput(s)
	if s.Egress != nil {
		p, err := newHostProxy(s.Egress, s.refused)
		if err != nil {
			return nil, err
		}
		b.proxy = p
		in.ProxyPorts = p.ports[:]
	}
	r, err := seatbelt.NewRunner(runner, in, s.Workspace)
	if err != nil {
		b.close()
		return nil, fromSeatbelt(err)
	}
	b.runner = r
	return b, nil
}

// seatbeltInput is what the profile is generated from, for every command;
// with NetworkAllow the proxy's ports are added once it listens.
func seatbeltInput(s *spec) seatbelt.Input {
	return seatbelt.Input{
		Workspace:   s.Workspace,
		Writable:    s.Writable,
		ReadOnly:    s.ReadOnly,
		Hidden:      s.Hidden,
		Protected:   protectedNames(s.AllowPlanting),
		NetworkNone: s.Network == NetworkNone,
		Locate:      seatbelt.LocateProtected,
	}
}

// fromSeatbelt is the runner's error as the package's.
func fromSeatbelt(err error) error {
	var e *seatbelt.Error
	if !errors.As(err, &e) {
		return &SetupError{Layer: LayerSeatbelt, Err: err}
	}
	return &SetupError{Layer: Layer(e.Layer), Path: e.Path, Err: e.Err}
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
	env := req.Env
	if b.proxy != nil {
		env = withProxyEnv(env, b.proxy.ports[0], b.proxy.ports[1])
	}
	p, err := b.runner.Start(&seatbelt.Command{
		Path: path, Args: req.Args, Env: env, Dir: dir, Stdio: req.Stdio, ExtraFiles: req.ExtraFiles,
	})
	if err != nil {
		return nil, fromSeatbelt(err)
	}
	return seatbeltProcess{p}, nil
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

func (b *seatbeltBackend) close() error {
	if b.proxy != nil {
		b.proxy.stop()
	}
	return nil
}

// seatbeltProcess is the runner's process as the package's.
type seatbeltProcess struct{ *seatbelt.Process }

func (p seatbeltProcess) Wait() (exit, error) {
	status, rusage, err := p.Process.Wait()
	return exit{status: status, rusage: rusage}, err
}
