package corral

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corralhq/corral/internal/pathtree"
	"github.com/corralhq/corral/nsjail"
	"github.com/corralhq/corral/seccomp"
)

// violation is what the init reported, with the rule in the words the
// caller configured it by: a hidden path is "hidden by --hide ~/.ssh" when
// the caller hid it, "hidden credential store ~/.aws" when corral did.
func (s *spec) violation(v nsjail.Violation) Violation {
	out := Violation{Kind: ViolationKind(v.Kind), Target: v.Path, Process: v.Process, Count: v.Count}
	switch v.Reason {
	case nsjail.ReasonOutside:
		out.Rule = "outside the writable paths"
	case nsjail.ReasonReadOnly:
		out.Rule = "read-only by --read-only " + tilde(v.Match)
		if slices.Contains(s.Policy, v.Match) {
			out.Rule = "read-only: the sandbox's policy file " + tilde(v.Match)
		}
	case nsjail.ReasonHidden:
		out.Rule = "hidden by --hide " + tilde(v.Match)
		if slices.ContainsFunc(s.DefaultHidden, func(h string) bool { return pathtree.Within(v.Match, h) }) {
			out.Rule = "hidden credential store " + tilde(v.Match)
		}
	case nsjail.ReasonProtected:
		out.Rule = "protected: " + v.Match
	case nsjail.ReasonFilter:
		out.Rule = filterRule(v.Path, v.Match)
	case nsjail.ReasonDirect:
		out.Rule = RuleDirect
	case nsjail.ReasonListen:
		out.Rule = RuleListen
	case nsjail.ReasonOmitted:
		out.Rule = RuleOmitted
	default:
		out.Rule = string(v.Reason)
	}
	return out
}

// filterRule says why the system call filter refused call with the errno
// named errno: "system call filter, EPERM: attaches filesystems, which
// could cover or reveal any path", without the reason when the policy has
// several for them.
func filterRule(call, errno string) string {
	rule := "system call filter, " + errno
	if why := seccomp.WhyNamed(call, errno); why != "" {
		rule += ": " + why
	}
	return rule
}

// tilde writes p under the home directory as ~/..., as users write it.
func tilde(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if home, err = filepath.EvalSymlinks(home); err != nil {
		return p
	}
	if rel, ok := strings.CutPrefix(p, home); ok && (rel == "" || rel[0] == '/') {
		return "~" + rel
	}
	return p
}
