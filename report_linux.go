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
	out := Violation{Kind: ViolationKind(v.Kind), Target: v.Path, Process: v.Process, Count: v.Count, Probe: v.Probe}
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
		if hostPortTarget(v.Path) {
			out.Rule = RuleHostPort
		}
	case nsjail.ReasonListen:
		out.Rule = RuleListen
	case nsjail.ReasonHostPort:
		out.Rule = RuleHostPort
	case nsjail.ReasonOmitted:
		out.Rule = RuleOmitted
	default:
		out.Rule = string(v.Reason)
	}
	out.Allow = out.Allows()
	if v.Reason == nsjail.ReasonReadOnly && out.Allow != "" && !s.inWritable(v.Path) {
		// Under no writable path, it stays read-only without the option.
		out.Allow = "--writable (writable_paths) without --read-only " + tilde(v.Match)
	}
	return out
}

// inWritable tells whether p, as the command named it, lies under the
// workspace or a writable path.
func (s *spec) inWritable(p string) bool {
	roots := append([]string{s.sandboxWorkspace()}, s.Writable...)
	return slices.ContainsFunc(roots, func(r string) bool { return r != "" && pathtree.Within(p, r) })
}

// filterRule says why the system call filter refused call with the errno
// named errno: "system call filter, EPERM: attaches filesystems, which
// could cover or reveal any path", without the reason when the policy has
// several for them.
func filterRule(call, errno string) string {
	rule := "system call filter, " + errno
	name, family, _ := strings.Cut(call, "(")
	why := seccomp.WhyNamed(name, errno)
	if w, ok := socketWhy[strings.TrimSuffix(family, ")")+" "+errno]; ok {
		why = w
	}
	if why != "" {
		rule += ": " + why
	}
	return rule
}

// socketWhy says why the filter refuses a socket of a family ("AF_UNIX
// EPERM"), where the policy has several reasons for socket and one errno.
var socketWhy = map[string]string{
	"AF_UNIX EPERM":   "unix sockets reach host daemons through socket files, docker.sock among them",
	"AF_INET EPERM":   "no network: there is no network namespace to keep the command off the host's",
	"AF_INET6 EPERM":  "no network: there is no network namespace to keep the command off the host's",
	"AF_INET EACCES":  "only TCP leaves the sandbox, through the proxy or to a host port",
	"AF_INET6 EACCES": "only TCP leaves the sandbox, through the proxy or to a host port",
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
