package corral

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/nsjail"
	"github.com/corralhq/corral/seccomp"
)

func registerEntrypoints() { nsjail.Register() }

// linuxBackend runs commands in namespace sandboxes, or on the landlock rung
// in bare ones.
type linuxBackend struct {
	jail      *nsjail.Jail
	changeset *changeset.Changeset // the workspace's overlay, or nil
	spec      *spec
}

// newBackend picks the rung the host allows (the probe runs once per
// process), compiles the seccomp filter once for the sandbox and prepares the
// jail. On rung none it runs commands directly, as the config allowed.
func newBackend(s *spec) (backend, error) {
	plan, err := choose(probeHost().withTestHook(), s.needs())
	if err != nil {
		return nil, err
	}
	if s.Changeset != nil && plan.rung != RungFull {
		return nil, &SetupError{Layer: LayerMountNS, Err: fmt.Errorf(
			"a changeset overlays the workspace in a mount namespace, which rung %s does not have", plan.rung)}
	}
	if s.hasDests() && plan.rung != RungFull {
		return nil, s.destRefusal(plan.rung)
	}
	if s.hasPersist() && plan.rung != RungFull {
		return nil, s.persistRefusal(plan.rung)
	}
	if msg := plan.warning(); msg != "" && s.logf != nil {
		s.logf("%s", msg)
	}
	if plan.rung == RungNone {
		return &directBackend{workspace: s.Workspace}, nil
	}
	o, err := jailOptions(s, plan)
	if err != nil {
		return nil, err
	}
	j, err := nsjail.New(o)
	if err != nil {
		return nil, translate("", err)
	}
	return &linuxBackend{jail: j, changeset: s.Changeset, spec: s}, nil
}

// jailOptions turns a spec and its rung into the jail's options.
func jailOptions(s *spec, plan *rungPlan) (nsjail.Options, error) {
	bare := plan.rung == RungLandlock
	in := mountInput(s, overlays(s))
	o := nsjail.Options{
		Workspace: in.Writable[0],
		Writable:  in.Writable[1:],
		ReadOnly:  in.ReadOnly,
		Hidden:    in.Hidden,
		Protected: in.Protected,
		NetNone:   s.Network == NetworkNone,
		Direct:    s.DirectSpawn,
		Ahead:     s.Ahead,
		Overlays:  in.Overlays,
		Sources:   in.Sources,
		Layered:   in.Layered,
		Tmp:       in.Tmp,
		Bare:      bare,
	}
	noNet := bare && s.Network == NetworkNone // no namespace keeps it off the host's network
	if plan.landlock {
		o.Landlock = &nsjail.Landlock{ABI: plan.abi, Scope: plan.scope, DenyTCP: noNet}
	}
	if plan.seccomp {
		bpf, err := seccomp.Filter(seccomp.Options{
			AllowUnixSockets: s.UnixSockets, AllowPtrace: s.Ptrace, DenyInet: noNet,
		})
		if err != nil {
			return o, &SetupError{Layer: LayerSeccomp, Err: err}
		}
		o.Seccomp = bpf
	}
	if bare {
		tmp, err := filepath.EvalSymlinks(os.TempDir())
		if err != nil {
			return o, &SetupError{Layer: LayerTmp, Path: os.TempDir(), Err: err}
		}
		o.TempBase = tmp
	}
	return o, nil
}

func (b *linuxBackend) start(req *startRequest) (process, error) {
	if b.spec.PersistHome != "" {
		return b.startPersistent(req)
	}
	if b.changeset != nil {
		return b.startInChangeset(req)
	}
	return b.startJail(req)
}

// startPersistent starts a sandbox holding the persistent home's lock until
// every process in it is gone.
func (b *linuxBackend) startPersistent(req *startRequest) (process, error) {
	unlock, err := b.spec.lockPersist()
	if err != nil {
		return nil, &SetupError{Layer: LayerOverlay, Path: b.spec.PersistHome, Err: err}
	}
	start := b.startJail
	if b.changeset != nil {
		start = b.startInChangeset
	}
	p, err := start(req)
	if err != nil {
		unlock()
		return nil, err
	}
	return &lockedProcess{process: p, unlock: unlock}, nil
}

func (b *linuxBackend) startJail(req *startRequest) (process, error) {
	p, err := b.jail.Start(&nsjail.Command{
		Path: req.Name, Args: req.Args, Env: req.Env, Dir: req.Dir, Stdio: req.Stdio,
		ExtraFiles: req.ExtraFiles,
	})
	if err != nil {
		return nil, translate(req.Name, err)
	}
	return jailProcess{p, req.Name}, nil
}

// jailProcess is a sandbox as the package's process. A sandbox that failed
// while its command ran (its init died, or a protection could not be kept)
// reports the package's typed error.
type jailProcess struct {
	*nsjail.Process
	name string
}

func (p jailProcess) Wait() (exit, error) {
	ex, err := p.Process.Wait()
	if err != nil {
		err = translate(p.name, err)
	}
	return exit{status: ex.Status, rusage: ex.Rusage}, err
}

func (b *linuxBackend) close() error { return b.jail.Close() }

func (b *linuxBackend) warm(ctx context.Context) error { return b.jail.Ready(ctx) }

// translate turns a backend error into the package's typed errors: by the
// failure's layer and code, never by its text.
func translate(name string, err error) error {
	var ne *nsjail.Error
	if !errors.As(err, &ne) {
		return &SetupError{Layer: LayerSandbox, Err: err}
	}
	if ne.Layer == nsjail.LayerExec {
		// nsjail wraps lookpath's errors, which are ErrNotFound and
		// ErrNotExecutable, for a failure with a code.
		return &ExecError{Name: name, Err: ne.Err}
	}
	return &SetupError{Layer: fromNsjail(ne.Layer), Path: ne.Path, Err: ne.Err}
}

// fromNsjail is nsjail's layer under the package's name, the same.
func fromNsjail(l nsjail.Layer) Layer { return Layer(l) }
