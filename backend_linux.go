package corral

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/limits"
	"github.com/corralhq/corral/nsjail"
	"github.com/corralhq/corral/seccomp"
)

func registerEntrypoints() { nsjail.Register() }

// linuxBackend runs commands in namespace sandboxes, or on the landlock rung
// in bare ones.
type linuxBackend struct {
	jail      *nsjail.Jail
	changeset *changeset.Changeset // the workspace's overlay, or nil
	// egress is NetworkAllow's policy; with a network namespace each
	// command gets a proxy of its own on the sandbox's listeners, without
	// one (the landlock rung) hostProxy serves them all.
	egress    *egressPolicy
	hostProxy *hostProxy
	spec      *spec
	canReport bool // the kernel lets the init watch calls (seccomp listener)
	bare      bool // the landlock rung
}

// newBackend picks the rung the host allows (the probe runs once per
// process), compiles the seccomp filter once for the sandbox and prepares the
// jail. On rung none it runs commands directly, as the config allowed.
func newBackend(s *spec) (backend, error) {
	plan, err := choose(ladder.Probe().WithTestHook(), s.needs())
	if err != nil {
		return nil, err
	}
	withoutPlantingGuard(plan, s.protected())
	if s.Changeset != nil && plan.Rung != RungFull {
		return nil, &SetupError{Layer: LayerMountNS, Err: fmt.Errorf(
			"a changeset overlays the workspace in a mount namespace, which rung %s does not have", plan.Rung)}
	}
	if plan.Rung != RungFull {
		if err := s.destsOn(plan.Rung); err != nil {
			return nil, err
		}
	}
	if s.hasPersist() && plan.Rung != RungFull {
		return nil, s.persistRefusal(plan.Rung)
	}
	if err := s.hostNetRefusal(plan.Rung, initConnects(plan)); s.hostNet() && err != nil {
		return nil, err
	}
	if s.NoWorkspace && plan.Rung != RungFull {
		return nil, noWorkspaceRefusal(plan.Rung)
	}
	if msg := plan.Warning(); msg != "" && s.logf != nil {
		s.logf("%s", msg)
	}
	lh := ladder.LimitHostOf(plan.Rung, s.Limits.set, false)
	lp, err := planLimits(s.Limits, lh, s.Fallback)
	if err != nil {
		return nil, err
	}
	if lp.warning != "" && s.logf != nil {
		s.logf("%s", lp.warning)
	}
	if plan.Rung == RungNone {
		return &directBackend{workspace: s.Workspace}, nil
	}
	b := &linuxBackend{changeset: s.Changeset, egress: s.Egress, spec: s,
		canReport: plan.Seccomp && seccomp.ListenerSupport() == nil, bare: plan.Rung == RungLandlock}
	if s.Egress != nil && plan.Rung == RungLandlock {
		if b.hostProxy, err = newHostProxy(s.Egress, s.refused); err != nil {
			return nil, err
		}
	}
	o, err := jailOptions(s, plan, b.hostProxy)
	if err == nil {
		o.Limits, o.PidsRlimit = lp.set, plan.Rung == RungFull && !lh.Root
		// The default pids limit holds within the init's few threads; one
		// asked for, exactly (docs/layers.md, Limits).
		o.PidsExact = slices.Contains(s.Limits.asked, limits.Pids)
		if lh.Cgroup != nil && ladder.NeedsCgroup(lp.set, lh) {
			o.Cgroup = lh.Cgroup
		}
	}
	if err == nil && s.Changeset != nil {
		if err = s.Changeset.CopyUpUnmapped(s.logf); err != nil {
			err = &SetupError{Layer: LayerOverlay, Path: s.Changeset.Dir(), Err: err}
		}
	}
	if err == nil {
		b.jail, err = nsjail.New(o)
		err = translateErr("", err)
	}
	if err != nil {
		b.stopHostProxy()
		return nil, err
	}
	return b, nil
}

// translateErr is translate, keeping nil nil.
func translateErr(name string, err error) error {
	if err == nil {
		return nil
	}
	return translate(name, err)
}

// jailOptions turns a spec and its rung into the jail's options; hp is
// the proxy on the host's loopback of NetworkAllow on the landlock rung.
func jailOptions(s *spec, plan *ladder.Plan, hp *hostProxy) (nsjail.Options, error) {
	bare := plan.Rung == RungLandlock
	in := mountInput(s, overlays(s))
	o := nsjail.Options{
		Writable:  in.Writable,
		ReadOnly:  in.ReadOnly,
		Hidden:    in.Hidden,
		Protected: in.Protected,
		Homes:     in.Homes,
		NetNone:   s.Network == NetworkNone,
		NetProxy:  s.Network == NetworkAllow && !bare,
		Direct:    s.DirectSpawn,
		Ahead:     s.Ahead,
		Overlays:  in.Overlays,
		Sources:   in.Sources,
		Layered:   in.Layered,
		Tmp:       in.Tmp,
		Bare:      bare,
		Limits:    s.Limits.set, // newBackend leaves out those the host cannot enforce
	}
	if !bare {
		o.HostPorts, o.Publish = s.HostPorts, len(s.Publish) > 0
	}
	if !s.NoWorkspace {
		o.Workspace, o.Writable = in.Writable[0], in.Writable[1:]
	}
	o.IdleTimeout = s.IdleTimeout
	noNet := bare && s.Network == NetworkNone // no namespace keeps it off the host's network
	// Without a namespace, NetworkAllow's commands reach only the proxy,
	// over TCP only: through connections the init makes to its address
	// (Landlock refusing every connect of the command's own), or, without
	// a seccomp listener to stop connect in, Landlock allowing connect to
	// its ports on any address.
	viaProxy := bare && s.Network == NetworkAllow
	// Host ports on the landlock rung are connections the init makes
	// too, to the host's loopback on those ports alone.
	hostPorts := bare && len(s.HostPorts) > 0
	if hostPorts {
		noNet = false
	}
	if plan.Landlock {
		o.Landlock = &nsjail.Landlock{ABI: plan.ABI, Scope: plan.Scope, DenyTCP: noNet || viaProxy, NoSockets: !s.UnixSockets}
		switch {
		case viaProxy && hp != nil && initConnects(plan):
			o.ConnectOnly = hp.addrs()
		case viaProxy && hp != nil:
			o.Landlock.ConnectTCP = []uint16{uint16(hp.ports[0]), uint16(hp.ports[1])}
		}
		if hostPorts {
			o.Landlock.DenyTCP = true
			o.ConnectOnly = append(o.ConnectOnly, hostAddrs(s.HostPorts)...)
		}
	}
	if plan.Seccomp {
		bpf, err := seccomp.Filter(seccomp.Options{
			AllowUnixSockets: s.UnixSockets, AllowPtrace: s.Ptrace, DenyInet: noNet, TCPOnly: viaProxy || len(s.HostPorts) > 0,
		})
		if err != nil {
			return o, &SetupError{Layer: LayerSeccomp, Err: err}
		}
		o.Seccomp = bpf
	}
	if s.Helper != "" {
		h, err := nsjail.OpenHelper(s.Helper)
		if err != nil {
			return o, translate("", err)
		}
		o.Helper = h
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
	c := &nsjail.Command{
		Path: req.Name, Args: req.Args, Env: req.Env, Dir: req.Dir, Stdio: req.Stdio,
		ExtraFiles: req.ExtraFiles, Report: req.report && b.canReport,
		ReportReads: req.reads && b.canReport, Terminal: req.terminal,
	}
	if req.violation != nil {
		c.OnViolation = func(v nsjail.Violation) {
			if hostServes(v) {
				req.violation(b.spec.violation(v))
			}
		}
	}
	var hn *hostNetServe
	switch {
	case b.hostProxy != nil:
		c.Env = b.hostProxy.env(c.Env)
	case b.egress != nil || b.spec.hostNet() && !b.bare:
		var err error
		if c.Serve, hn, err = b.serveNet(req.Refused); err != nil {
			return nil, err
		}
	}
	p, err := b.jail.Start(c)
	if err != nil {
		if hn != nil {
			hn.stop()
		}
		return nil, translate(req.Name, err)
	}
	if hn != nil {
		hn.announce(p.Pid())
	}
	return jailProcess{p, req.Name, b.spec}, nil
}

// jailProcess is a sandbox as the package's process. A sandbox that failed
// while its command ran (its init died, or a protection could not be kept)
// reports the package's typed error.
type jailProcess struct {
	*nsjail.Process
	name string
	spec *spec
}

// Violations are the refusals the init reported, in the caller's words.
func (p jailProcess) Violations() []Violation {
	var out []Violation
	for _, v := range p.Process.Violations() {
		if hostServes(v) {
			out = append(out, p.spec.violation(v))
		}
	}
	return out
}

func (p jailProcess) Wait() (exit, error) {
	ex, err := p.Process.Wait()
	if err != nil {
		err = translate(p.name, err)
	}
	return exit{status: ex.Status, rusage: ex.Rusage}, err
}

func (b *linuxBackend) close() error {
	b.stopHostProxy()
	return b.jail.Close()
}

func (b *linuxBackend) stopHostProxy() {
	if b.hostProxy != nil {
		b.hostProxy.stop()
	}
}

// serve is nsjail's Command.Serve for NetworkAllow: a proxy of the
// command's own on the listeners its sandbox made inside its network
// namespace, reporting refusals to refused. It ends, with every
// connection it carries, when the sandbox is released.
func (b *linuxBackend) serve(refused func(Violation)) func([]*os.File, []string) ([]string, func(), error) {
	return func(files []*os.File, env []string) ([]string, func(), error) {
		var ls [2]net.Listener
		for i, f := range files[:2] {
			l, err := net.FileListener(f)
			if err != nil {
				closeListeners(ls[:i])
				return nil, nil, err
			}
			ls[i] = l
		}
		p, stop, err := b.egress.proxy(refused, "")
		if err != nil {
			closeListeners(ls[:])
			return nil, nil, err
		}
		serveOn(p, ls)
		env = withProxyEnv(env, ls[0].Addr().(*net.TCPAddr).Port, ls[1].Addr().(*net.TCPAddr).Port, "")
		return env, func() { stop(); closeListeners(ls[:]) }, nil
	}
}

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

// initConnects tells whether plan's commands can have their TCP
// connections made by their init (nsjail.Options.ConnectOnly): it takes a
// seccomp filter and a kernel able to stop a call in a listener.
func initConnects(plan *ladder.Plan) bool {
	return plan.Seccomp && seccomp.ListenerSupport() == nil
}
