package corral

import (
	"slices"

	"github.com/corralhq/corral/internal/learn"
	"github.com/corralhq/corral/limits"
)

// nearBound is how close to a limit a learning run's use must come for the
// limit to be learned as too tight: within a fifth of it.
const nearBound = 0.8

// nearLimits are the limits the command came near without hitting them,
// as limit events ("near --memory 512MiB"): its peak memory and its CPU
// time, which the init measured when it exited.
func (l *Learning) nearLimits(report []Violation) []learn.Event {
	ps := l.ProcessState
	if ps == nil || ps.rusage == nil {
		return nil
	}
	set := l.sb.spec.Limits.set
	hit := func(n limits.Name) bool {
		return slices.ContainsFunc(report, func(v Violation) bool { return v.Kind == ViolationLimit && v.Target == string(n) })
	}
	var out []learn.Event
	near := func(n limits.Name, used, bound float64) {
		if set.Has(n) && bound > 0 && used >= nearBound*bound && !hit(n) {
			out = append(out, learn.Event{Kind: string(ViolationLimit), Target: string(n), Rule: set.Flag(n) + " (came near it)", Count: 1})
		}
	}
	near(limits.Memory, float64(ps.rusage.Maxrss)*maxrssUnit, float64(set.Memory))
	near(limits.CPUTime, (ps.UserTime() + ps.SystemTime()).Seconds(), float64(set.CPUTime))
	return out
}
