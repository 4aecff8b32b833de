package corral

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/limits"
)

// limitPlan is what a sandbox enforces of its limits on h: the set in
// force, each limit's status, and the warning for the limits asked for
// that h cannot enforce (FallbackWarn) or the error (FallbackFail).
type limitPlan struct {
	set      limits.Set
	statuses []LimitStatus
	warning  string
}

func planLimits(ls limitSpec, h ladder.LimitHost, fallback Fallback) (*limitPlan, error) {
	p := &limitPlan{set: ls.set}
	var without []string
	for _, n := range limits.Names() {
		st := LimitStatus{Name: Limit(n)}
		st.Mechanism, st.Reason = h.Enforces(n)
		st.Available = st.Reason == ""
		if !st.Available {
			if ls.set.Has(n) && slices.Contains(ls.asked, n) {
				if fallback != FallbackWarn {
					return nil, &SetupError{Layer: LayerLimits, Err: fmt.Errorf(
						"%s cannot be enforced: %s (Fallback \"warn\" would run without it)", ls.set.Flag(n), st.Reason)}
				}
				without = append(without, fmt.Sprintf("%s (%s)", ls.set.Flag(n), st.Reason))
			}
			p.set = p.set.Without(n)
		}
		st.Value = p.set.Value(n)
		p.statuses = append(p.statuses, st)
	}
	if len(without) > 0 {
		p.warning = "corral: running without the limits " + strings.Join(without, "; ")
	}
	return p, nil
}

// limitViolations turns the limits a command hit into Violations, each
// naming the limit and how it was set.
func limitViolations(hits []limits.Name, ls limitSpec) []Violation {
	var out []Violation
	for _, n := range hits {
		rule := ls.set.Flag(n)
		if !slices.Contains(ls.asked, n) {
			rule += " (the default)"
		}
		out = append(out, Violation{Kind: ViolationLimit, Target: string(n), Rule: rule, Count: 1})
	}
	return out
}

// limitHitter is a process that reports, after Wait, the limits its
// command ran into.
type limitHitter interface {
	LimitsHit() []limits.Name
}

// LimitsHit returns, after Wait, the limits the command ran into, one
// Violation of kind ViolationLimit each: Target names the limit ("pids"),
// Rule how it was set ("--pids 512", or "--pids 4096 (the default)").
// Dying by SIGXCPU or SIGXFSZ and a full /tmp are certain; a pids or
// memory limit is inferred (see docs/layers.md) and may be missed or, in
// rare cases, named when the command failed for another reason. It is
// empty before Wait and on backends that enforce no limits.
func (c *Cmd) LimitsHit() []Violation {
	h, ok := c.proc.(limitHitter)
	if !ok || !c.exited.Load() {
		return nil
	}
	return limitViolations(h.LimitsHit(), c.sb.spec.Limits)
}
