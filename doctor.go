package corral

import (
	"errors"

	"github.com/corralhq/corral/internal/ladder"
)

// Report is what Doctor finds: each layer of the sandbox on this host and
// the rung a sandbox with the given Config would run on.
type Report struct {
	Layers      []LayerStatus `json:"layers"`
	LandlockABI int           `json:"landlock_abi"`
	Fallback    Fallback      `json:"fallback"`
	// Rung is the rung commands would run on; empty when they would not
	// run at all.
	Rung Rung `json:"rung,omitempty"`
	// Without names the full rung's layers that rung goes without.
	Without []string `json:"without,omitempty"`
	// OK says the Config's policy can be met on this host.
	OK bool `json:"ok"`
	// Problem says why not, naming the missing layer.
	Problem string `json:"problem,omitempty"`
	// Network says how the Config's Network is enforced on that rung.
	Network string `json:"network,omitempty"`
	// HiddenByDefault are the credential stores (see CredentialStores)
	// that exist, that the caller can read, and that a sandbox hides
	// unless Config.Reveal names them.
	HiddenByDefault []string `json:"hidden_by_default"`
	// Limits says, for each resource limit, whether the host can enforce
	// it on Rung and how, and the value in force for cfg.
	Limits []LimitStatus `json:"limits"`
}

// Doctor probes the host (once per process) and reports which layers it
// offers and the rung a sandbox built from cfg would use. Unlike New, which
// takes the namespaces as given where nothing argues against them, it tries
// every one. On macOS the one layer is seatbelt: whether
// /usr/bin/sandbox-exec applies a profile. Only Mode, Network, Fallback,
// AllowUnixSockets and AllowPlanting of cfg matter (the last says whether
// a rung without the guard of protected names goes without something),
// and Reveal for the credential stores hidden by default; paths are not
// checked. The error reports an invalid field.
func Doctor(cfg Config) (*Report, error) {
	s := &spec{UnixSockets: cfg.AllowUnixSockets, Ptrace: cfg.AllowPtrace, AllowPlanting: cfg.AllowPlanting, Protect: cfg.Protect}
	if err := s.resolveChoices(cfg); err != nil {
		return nil, err
	}
	var err error
	if s.Limits, err = cfg.Limits.resolve(); err != nil {
		return nil, err
	}
	stores, err := hiddenByDefault(cfg.Reveal)
	if err != nil {
		return nil, err
	}
	r := report(ladder.ProbeFully().WithTestHook(), s)
	r.HiddenByDefault = []string{}
	if s.Mode != ModeDisabled {
		for _, st := range stores {
			r.HiddenByDefault = append(r.HiddenByDefault, st.real)
		}
	}
	return r, nil
}

// report is what Doctor says about s on h.
func report(h *ladder.Host, s *spec) *Report {
	r := &Report{Layers: h.Layers, LandlockABI: h.LandlockABI, Fallback: s.Fallback}
	if s.Mode == ModeDisabled {
		r.Rung, r.OK, r.Without = RungNone, true, []string{"every layer (Mode is disabled)"}
		return r
	}
	plan, err := choose(h, s.needs())
	if err != nil {
		var se *SetupError
		errors.As(err, &se)
		r.Problem = string(se.Layer) + ": " + se.Err.Error()
		return r
	}
	withoutPlantingGuard(plan, s.protected())
	r.Rung, r.OK = plan.Rung, true
	for _, l := range plan.Without {
		r.Without = append(r.Without, string(l.Name))
	}
	r.Network = networkEnforcement(s.Network, plan)
	reportLimits(r, s)
	return r
}

// reportLimits fills in what r's rung can enforce of s's limits; a limit s
// asks for that it cannot makes the Config fail under FallbackFail.
func reportLimits(r *Report, s *spec) {
	lh := ladder.LimitHostOf(r.Rung, s.Limits.set, true)
	lp, _ := planLimits(s.Limits, lh, FallbackWarn)
	r.Limits = lp.statuses
	if _, err := planLimits(s.Limits, lh, s.Fallback); err != nil {
		var se *SetupError
		errors.As(err, &se)
		r.OK, r.Problem = false, string(se.Layer)+": "+se.Err.Error()
	}
}
