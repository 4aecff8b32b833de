package preflight

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/zones"
)

// DefaultTimeout bounds a Check that sets no Timeout of its own.
const DefaultTimeout = 30 * time.Second

// Check is a test the caller adds to a preflight, such as an external
// account that must work: a command run inside the sandbox
// ([SandboxCommand]), an API called from the caller. Run gets a context
// that ends after Timeout; a Run that has not returned by then fails the
// check (and is left to finish on its own).
type Check struct {
	Name    string
	Timeout time.Duration
	Run     func(ctx context.Context) error
}

// Spec is what an agent is to start with.
type Spec struct {
	// Config is the sandbox its commands run in. Its Fallback is ignored:
	// preflight needs every layer the policy asks for, with no degraded
	// mode.
	Config corral.Config
	// Access is the zones it reaches (nil: none).
	Access *zones.Access
	// Project is every zone of the project, hidden from the agent's
	// commands but for those it reaches (see zones.Access.SandboxConfig).
	Project []zones.Zone
	// Changeset is where its commands' writes to zones that need review
	// wait; empty, a directory under the temporary directory is assumed.
	Changeset string
	// ZonesShown says Config shows Access's zones already (AgentSpec's,
	// resolved by config.Config.SandboxConfig with the agent's own
	// changeset): they are not added again, and Changeset is not used.
	ZonesShown bool
	// Refused, when set, is why no entry point can start the agent as its
	// table says (config.Config.SandboxConfig's error): the config check
	// fails with it.
	Refused error
	// Checks are the caller's own.
	Checks []Check
	// Resolve looks up an allowed domain's addresses for the network
	// checks; nil uses the system's resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Result is the outcome of one check.
type Result struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Reason says why it failed.
	Reason string `json:"reason,omitempty"`
}

// Report is a whole preflight: pass only when every check passed.
type Report struct {
	OK     bool     `json:"ok"`
	Checks []Result `json:"checks"`
}

// Failures returns the checks that failed.
func (r *Report) Failures() []Result {
	var out []Result
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// Err returns nil when the preflight passed, else an *Error with every
// failure: what a spawn hands its parent instead of starting.
func (r *Report) Err() error {
	if r.OK {
		return nil
	}
	return &Error{Failures: r.Failures()}
}

// Error is a failed preflight.
type Error struct {
	Failures []Result
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = f.Name + ": " + f.Reason
	}
	return "preflight failed: " + strings.Join(parts, "; ")
}

// Run runs every check of s and reports them all; one failure fails the
// whole. The checks: the sandbox's config resolves; every layer it needs
// is available, without falling back (corral.Doctor with Fallback
// "fail"); the workspace, every writable, read-only and zone path exists
// with the access it needs; with NetworkAllow, every exact allowed domain
// resolves; then the caller's checks, concurrently, each within its
// timeout.
func Run(ctx context.Context, s Spec) *Report {
	r := &Report{}
	r.add("config", configCheck(s))
	r.add("layers", layersCheck(s.Config))
	for _, p := range pathChecks(s.Config, s.Access) {
		r.add(p.name, p.err)
	}
	for _, n := range networkChecks(ctx, s.Config, s.Resolve) {
		r.add(n.name, n.err)
	}
	for i, err := range runChecks(ctx, s.Checks) {
		r.add(s.Checks[i].Name, err)
	}
	r.OK = len(r.Failures()) == 0
	return r
}

func (r *Report) add(name string, err error) {
	res := Result{Name: name, OK: err == nil}
	if err != nil {
		res.Reason = oneLine(err.Error())
	}
	r.Checks = append(r.Checks, res)
}

// oneLine keeps a reason to one line, whatever a check returned.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// configCheck resolves the sandbox's config as New would, with its zones
// mounted, without building anything.
func configCheck(s Spec) error {
	if s.Refused != nil {
		return s.Refused
	}
	c := s.Config
	if !s.Access.Pure() && !s.ZonesShown {
		cs := s.Changeset
		if cs == "" {
			cs = filepath.Join(os.TempDir(), "corral-preflight-changeset")
		}
		var err error
		if c, err = s.Access.SandboxConfig(c, s.Project, cs); err != nil {
			return err
		}
	}
	_, err := c.Resolved()
	return err
}

// layersCheck asks the doctor whether this host gives every layer the
// policy needs, refusing the fallback.
func layersCheck(c corral.Config) error {
	c.Fallback = corral.FallbackFail
	r, err := corral.Doctor(c)
	if err != nil {
		return err
	}
	if !r.OK {
		return errors.New(r.Problem)
	}
	return nil
}

// runChecks runs the caller's checks concurrently, each bounded by its
// timeout.
func runChecks(ctx context.Context, checks []Check) []error {
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() { errs[i] = runOne(ctx, c) })
	}
	wg.Wait()
	return errs
}

func runOne(ctx context.Context, c Check) error {
	if c.Run == nil {
		return errors.New("no Run function")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("check panicked: %v", p)
			}
		}()
		done <- c.Run(ctx)
	}()
	select {
	case err := <-done:
		if err != nil && ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("did not finish within %s: %w", timeout, err)
		}
		return err
	case <-ctx.Done():
		return fmt.Errorf("did not finish within %s", timeout)
	}
}
