//go:build unix

package corral

import (
	"errors"
	"os"

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
		Protected:   s.protected(),
		NetworkNone: s.Network == NetworkNone,
		Locate:      seatbelt.LocateProtected,
	}
}

// SeatbeltProfile returns the Seatbelt profile a sandbox of c runs its
// commands under on macOS, generated from the same input as the backend's:
// tmpDir stands for the private directory made for each command, and with
// NetworkAllow port 0 for each of the proxy's ports, chosen when the
// sandbox is made. It is what `corral profile --platform darwin` prints.
func (c Config) SeatbeltProfile(tmpDir string) (string, error) {
	s, err := c.resolve()
	if err != nil {
		return "", err
	}
	in := seatbeltInput(s)
	in.TempDir = tmpDir
	if s.Network == NetworkAllow {
		in.ProxyPorts = []int{0, 0}
	}
	p, err := seatbelt.Generate(in)
	if err != nil {
		return "", fromSeatbelt(err)
	}
	return p.String(), nil
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
	dir, err := seatbelt.Workdir(b.spec.Workspace, req.Dir)
	if err != nil {
		return nil, fromSeatbelt(err)
	}
	path, err := seatbelt.LookPath(req.Name, dir, req.Env, b.spec.Hidden)
	if err != nil {
		return nil, &ExecError{Name: req.Name, Err: err}
	}
	env := req.Env
	if b.proxy != nil {
		env = b.proxy.env(env)
	}
	var master *os.File
	done := func() {}
	if req.terminal {
		if master, done, err = hostTerminal(req); err != nil {
			return nil, err
		}
	}
	p, err := b.runner.Start(&seatbelt.Command{
		Path: path, Args: req.Args, Env: env, Dir: dir, Stdio: req.Stdio, ExtraFiles: req.ExtraFiles,
		Terminal: req.terminal,
	})
	done()
	if err != nil {
		if master != nil {
			master.Close()
		}
		return nil, fromSeatbelt(err)
	}
	return seatbeltProcess{p, master}, nil
}

func (b *seatbeltBackend) close() error {
	if b.proxy != nil {
		b.proxy.stop()
	}
	return nil
}

// seatbeltProcess is the runner's process as the package's.
type seatbeltProcess struct {
	*seatbelt.Process
	terminal *os.File // Cmd.Terminal's caller side
}

func (p seatbeltProcess) Terminal() *os.File { return p.terminal }

func (p seatbeltProcess) Wait() (exit, error) {
	status, rusage, err := p.Process.Wait()
	return exit{status: status, rusage: rusage}, err
}
