package zones

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/changeset"
)

// needsReview reports whether commands' writes to z must wait for
// review: it is writable and not every change is preApproved.
func needsReview(z Zone) bool {
	return z.Mode == ReadWrite && z.Approval.Write != Blocked &&
		(z.Approval.Write != PreApproved || z.Approval.Delete != PreApproved)
}

// SandboxConfig returns base with a's zones added, for the sandbox a
// worker's commands run in: each zone at /NAME, read-only when its mode is
// "ro" or its writes are blocked, writable when every change is
// preApproved, and otherwise overlaid with its writes kept in the
// changeset directory cs for Review. Every zone of project is hidden at
// its host path, so a command reaches a zone only at /NAME, and one the
// worker lacks not at all. A zone whose directory does not exist cannot
// be hidden, and a name created there later would be reachable at its
// host path: create every zone first (MakeZones; NewWorker does). cs may be empty when no zone needs review; it
// must lie outside the workspace and every zone. Zones need a mount
// namespace: the full rung.
//
// A pure access (no zone) gives a sandbox without a workspace
// (corral.Config.NoWorkspace): base's Workspace is hidden at its host path
// and shown nowhere, and commands start in their private /tmp, so that
// they reach no file of the project: only what base shows besides (the
// host's system directories read-only, and any WritablePaths and Binds
// it names). cs is not used then. It too needs the full rung.
func (a *Access) SandboxConfig(base corral.Config, project []Zone, cs string) (corral.Config, error) {
	return a.sandboxConfig(base, project, cs, false)
}

// sandboxConfig is SandboxConfig; a direct one, for I/O whose consent was
// asked before (the file tools'), mounts the zone only writable, without
// a changeset, and every other zone read-only.
func (a *Access) sandboxConfig(base corral.Config, project []Zone, cs string, direct bool, only ...string) (corral.Config, error) {
	c := base
	c.HiddenPaths = slices.Clone(base.HiddenPaths)
	c.Binds = slices.Clone(base.Binds)
	hide := func(p string) {
		if _, err := os.Stat(p); err == nil && !slices.Contains(c.HiddenPaths, p) {
			c.HiddenPaths = append(c.HiddenPaths, p)
		}
	}
	for _, z := range slices.Concat(project, a.Zones()) {
		hide(z.Path)
	}
	if a.Pure() {
		if base.Workspace != "" {
			hide(base.Workspace)
		}
		c.NoWorkspace, c.Workspace, c.WorkspaceDest = true, "", ""
		c.Changeset, c.ChangesetPaths = "", nil
		return c, nil
	}
	for _, z := range a.Zones() {
		review := needsReview(z) && !direct
		if review && cs == "" {
			return corral.Config{}, fmt.Errorf("/%s: its changes need review, which commands' writes get through a changeset: name a changeset directory", z.Name)
		}
		c.Binds = append(c.Binds, corral.Bind{
			Source:    z.Path,
			Dest:      "/" + z.Name,
			ReadOnly:  z.Mode != ReadWrite || z.Approval.Write == Blocked || direct && !slices.Contains(only, z.Name),
			Changeset: review,
		})
		if review {
			c.Changeset = cs
		}
	}
	return c, nil
}

// MakeZones creates the directory of every zone of project that does not
// exist yet, empty, so that a sandbox can hide it: a zone made after the
// sandbox is built would otherwise be reachable at its host path, with
// whatever is put there.
func MakeZones(project []Zone) error {
	for _, z := range project {
		if err := os.MkdirAll(z.Path, 0o755); err != nil {
			return fmt.Errorf("/%s: %w", z.Name, err)
		}
	}
	return nil
}

// Worker is one worker: its Access, the sandbox its commands run in, and
// the file tools' view of the same zones.
type Worker struct {
	access   *Access
	project  []Zone
	approver Approver
	sb       *corral.Sandbox
	cs       string
	hidden   []string // changesets its commands must not see
	files    *FS

	base    corral.Config
	fileMu  sync.Mutex
	fileSbs map[string]*corral.Sandbox // the file tools' sandboxes, by zone, built on first use
	closed  bool
}

// WorkerConfig says how to build a Worker.
type WorkerConfig struct {
	// Base is the rest of the sandbox's policy: its Workspace is the
	// worker's own scratch directory, outside every zone.
	Base corral.Config
	// Project is every zone of the project, so that those the worker lacks
	// are hidden from it.
	Project []Zone
	// Approver decides changes that need approval, from the file tools at
	// once and from commands when Review runs; nil refuses them.
	Approver Approver
	// Changeset is where commands' writes to zones that need review wait
	// for it; needed only when one does.
	Changeset string
}

// NewWorker builds the worker a reaches, with its sandbox. Zones of the
// project whose directories do not exist yet are created (see MakeZones).
func NewWorker(a *Access, c WorkerConfig) (*Worker, error) {
	return newWorker(a, c, nil)
}

// newWorker builds a worker whose commands cannot see the changesets
// listed in hide (its ancestors'), nor its own: their upper directories
// hold changes to zones it may not have.
func newWorker(a *Access, c WorkerConfig, hide []string) (*Worker, error) {
	if err := MakeZones(slices.Concat(c.Project, a.Zones())); err != nil {
		return nil, err
	}
	cfg, err := a.SandboxConfig(c.Base, c.Project, c.Changeset)
	if err != nil {
		return nil, err
	}
	if cfg.Changeset != "" {
		if err := os.MkdirAll(cfg.Changeset, 0o700); err != nil {
			return nil, err
		}
		hide = append(slices.Clone(hide), cfg.Changeset)
	}
	cfg.HiddenPaths = withHidden(cfg.HiddenPaths, hide)
	sb, err := corral.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Worker{access: a, project: c.Project, approver: c.Approver, sb: sb, cs: cfg.Changeset, hidden: hide,
		files: NewFS(a, c.Approver), base: c.Base, fileSbs: map[string]*corral.Sandbox{}}, nil
}

// withHidden is hidden with the paths of hide it lacks.
func withHidden(hidden, hide []string) []string {
	for _, h := range hide {
		if !slices.Contains(hidden, h) {
			hidden = append(hidden, h)
		}
	}
	return hidden
}

// Access is what the worker may reach.
func (w *Worker) Access() *Access { return w.access }

// Files is the worker's zones as an in-process [FS]: the zones' modes and
// approvals, but none of the sandbox's own rules inside a zone (hidden
// and read-only paths, protected names such as .git). The file tools a
// model is given should do their I/O in FileSandbox instead, as
// tools.ZoneFile does, so that they reach exactly what the worker's
// commands reach.
func (w *Worker) Files() *FS { return w.files }

// Approver is what decides the worker's changes that need approval; nil
// refuses them.
func (w *Worker) Approver() Approver { return w.approver }

// FileSandbox returns the sandbox the worker's file tools do their I/O in
// for the zone name, built on first use and closed with the worker. Its
// policy is the commands' (the same zones at /NAME, the same hidden
// paths), except that name, when the worker may write it, is bound
// writable directly, without a changeset (the file tools ask for consent
// before each change, so a change they make is decided already), and every
// other zone is read-only: a symlink planted in one zone cannot turn a
// write decided for it into a write to another. Reads there show the
// zones as they are on the host, without what a command left waiting for
// Review.
func (w *Worker) FileSandbox(name string) (*corral.Sandbox, error) {
	if _, ok := w.access.Zone(name); !ok {
		return nil, fmt.Errorf("zones: the worker has no zone %q", name)
	}
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	if w.closed {
		return nil, errors.New("zones: the worker is closed")
	}
	if sb, ok := w.fileSbs[name]; ok {
		return sb, nil
	}
	cfg, err := w.access.sandboxConfig(w.base, w.project, "", true, name)
	if err != nil {
		return nil, err
	}
	cfg.HiddenPaths = withHidden(cfg.HiddenPaths, w.hidden)
	sb, err := corral.New(cfg)
	if err != nil {
		return nil, err
	}
	w.fileSbs[name] = sb
	return sb, nil
}

// Sandbox is the sandbox its commands run in.
func (w *Worker) Sandbox() *corral.Sandbox { return w.sb }

// Command prepares a command in the worker's sandbox. When it has ended,
// call Review so that its changes to zones that need review are decided.
//
// When nothing waits for review, the changeset begins again over the
// zones as they are now (see changeset.Changeset.Rebase), so that a file
// another worker changed before this command is not taken for a conflict.
func (w *Worker) Command(ctx context.Context, name string, args ...string) *corral.Cmd {
	if w.cs != "" {
		if cs, err := changeset.Open(w.cs); err == nil {
			// In use means a command runs: the baseline stays, which at
			// worst reports a conflict that was none.
			cs.Rebase()
		}
	}
	return w.sb.Command(ctx, name, args...)
}

// Review decides the changes the last command left in zones that need
// review (see Access.Review). It does nothing when no zone needs review.
func (w *Worker) Review(ctx context.Context) (*Reviewed, error) {
	if w.cs == "" {
		return &Reviewed{}, nil
	}
	cs, err := changeset.Open(w.cs)
	if err != nil {
		return nil, err
	}
	return w.access.Review(ctx, cs, w.approver)
}

// Discard throws away the changes the worker's commands left waiting for
// review, such as those a *ConflictError kept, so that the next command
// starts from the zones as they are.
func (w *Worker) Discard() error {
	if w.cs == "" {
		return nil
	}
	cs, err := changeset.Open(w.cs)
	if err != nil {
		return err
	}
	_, err = cs.Apply(changeset.ApplyOptions{Select: func(changeset.Change) bool { return false }})
	return err
}

// Child derives a child worker from this one (see Access.Derive): only the
// zones it declares, never more than this worker holds, in a sandbox of
// its own built from c (c.Project is taken from this worker when empty).
func (w *Worker) Child(decls []Decl, c WorkerConfig) (*Worker, error) {
	a, err := w.access.Derive(decls)
	if err != nil {
		return nil, err
	}
	if c.Project == nil {
		c.Project = w.project
	}
	return newWorker(a, c, w.hidden)
}

// Close ends the worker's sandboxes.
func (w *Worker) Close() error {
	w.fileMu.Lock()
	w.closed = true
	for _, sb := range w.fileSbs {
		sb.Close()
	}
	w.fileMu.Unlock()
	return w.sb.Close()
}
