package corral

import (
	"strings"
	"sync"
)

// violationLog collects what a sandbox's shared proxy refused (the
// landlock and seatbelt rungs), when no single command can be named:
// repeats of the same kind, target and rule are one Violation with a Count.
type violationLog struct {
	mu   sync.Mutex
	list []Violation
}

// add records v and reports whether it is the first of its kind, target
// and rule.
func (l *violationLog) add(v Violation) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.list {
		if o := &l.list[i]; o.Kind == v.Kind && o.Target == v.Target && o.Rule == v.Rule {
			o.Count += max(v.Count, 1)
			return false
		}
	}
	v.Count = max(v.Count, 1)
	l.list = append(l.list, v)
	return true
}

// recordViolation is where the refusals of a proxy shared by the
// sandbox's commands arrive (the landlock and seatbelt rungs), when no
// single command can be named.
func (sb *Sandbox) recordViolation(v Violation) {
	if sb.violations.add(v) {
		sb.logf("%s", violationLine(v))
	}
}

// violationLine says v in one line, with what would allow it: "corral:
// blocked evil.example:443 (not in allowed domains); --allow-domain
// evil.example (allowed_domains) allows it".
func violationLine(v Violation) string {
	what := "refused " + string(v.Kind)
	if v.Kind == ViolationNetwork {
		what = "blocked"
		if strings.HasPrefix(v.Rule, RulePlaceholder) {
			what = "sent to" // no refusal: the request went, as it was
		}
	}
	line := "corral: " + what + " " + v.Target + " (" + v.Rule + ")"
	if a := v.Allows(); a != "" {
		line += "; " + a + " allows it"
	}
	return line
}
