package corral

import (
	"errors"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/nsjail"
)

func registerEntrypoints() { nsjail.Register() }

// linuxBackend runs commands in namespace sandboxes.
type linuxBackend struct {
	jail      *nsjail.Jail
	changeset *changeset.Changeset // the workspace's overlay, or nil
}

func newBackend(s *spec) (backend, error) {
	j, err := nsjail.New(nsjail.Options{
		Workspace: s.Workspace,
		Writable:  s.Writable,
		ReadOnly:  s.ReadOnly,
		Hidden:    s.Hidden,
		Protected: protectedNames(s.AllowPlanting),
		NetNone:   s.Network == NetworkNone,
		Direct:    s.DirectSpawn,
		Overlays:  overlays(s),
	})
	if err != nil {
		return nil, err
	}
	return &linuxBackend{jail: j, changeset: s.Changeset}, nil
}

func (b *linuxBackend) start(req *startRequest) (process, error) {
	if b.changeset != nil {
		return b.startInChangeset(req)
	}
	return b.startJail(req)
}

func (b *linuxBackend) startJail(req *startRequest) (process, error) {
	p, err := b.jail.Start(&nsjail.Command{
		Path: req.Name, Args: req.Args, Env: req.Env, Dir: req.Dir, Stdio: req.Stdio,
	})
	if err != nil {
		return nil, translate(req.Name, err)
	}
	return p, nil
}

func (b *linuxBackend) close() error { return b.jail.Close() }

// translate turns a backend error into the package's typed errors.
func translate(name string, err error) error {
	var ne *nsjail.Error
	if !errors.As(err, &ne) {
		return &SetupError{Layer: "sandbox", Err: err}
	}
	if ne.Layer == "exec" {
		switch ne.Err.Error() {
		case ErrNotFound.Error():
			return &ExecError{Name: name, Err: ErrNotFound}
		case ErrNotExecutable.Error():
			return &ExecError{Name: name, Err: ErrNotExecutable}
		}
		return &ExecError{Name: name, Err: ne.Err}
	}
	return &SetupError{Layer: ne.Layer, Path: ne.Path, Err: ne.Err}
}
