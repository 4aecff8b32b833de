package corral

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/corralhq/corral/internal/tally"
)

// ViolationKind names what kind of thing the sandbox refused.
type ViolationKind string

const (
	// ViolationWrite is a write outside the writable paths.
	ViolationWrite ViolationKind = "write"
	// ViolationRead is a read of a hidden path.
	ViolationRead ViolationKind = "read"
	// ViolationPlant is a write under a protected name (see
	// [ProtectedNames]) that did not reach the host.
	ViolationPlant ViolationKind = "plant"
	// ViolationNetwork is a refused network destination, or one a
	// secret's placeholder went to as it is (Rule starts with
	// RulePlaceholder).
	ViolationNetwork ViolationKind = "network"
	// ViolationSyscall is a system call the filter refused.
	ViolationSyscall ViolationKind = "syscall"
	// ViolationLimit is a resource limit the command hit.
	ViolationLimit ViolationKind = "limit"
)

// Violation is one thing the sandbox refused a command, in words the
// caller (and the model behind it) can act on. Repeats of the same kind,
// target and rule are one Violation with a Count.
//
// Paths and names come from what the sandboxed process asked for: they
// are hints for the reader, never policy.
type Violation struct {
	Kind ViolationKind `json:"kind"`
	// Target is the path, "host:port", system call or limit refused.
	Target string `json:"target"`
	// Rule is why, in the caller's own terms: "outside the writable
	// paths", "hidden by --hide ~/.ssh", "protected: .git/hooks", "not in
	// allowed domains".
	Rule string `json:"rule"`
	// Process is the name of the process that was refused, when known.
	Process string `json:"process,omitempty"`
	Count   int    `json:"count"`
	// Allow names what would allow it, as the corral run flag and the
	// config file's key: "--writable (writable_paths)"; empty when nothing
	// does (see [Violation.Allows]).
	Allow string `json:"allow,omitempty"`
	// Probe marks a call the C library makes on its own and does without
	// when refused, as on a host that lacks what it looks for: glibc's
	// look for nscd's socket, an nss module's for systemd's user database,
	// made by every `ls -l` or `id`. It is listed here and left out of
	// [Summary].
	Probe bool `json:"probe,omitempty"`
}

// RuleOmitted is the Rule of the entry that stands, per kind, for the
// refusals a report had no room to list (its Target is empty): a command
// trying thousands of different paths cannot make a report grow without
// bound.
const RuleOmitted = "not listed: too many different refusals"

// The rules of a refused connection of the landlock rung's own, where the
// command's network is the host's and only corral's proxy is reachable
// (see Network).
const (
	// RuleDirect: a connection to anything but corral's proxy.
	RuleDirect = "not through corral's proxy, which HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name"
	// RuleListen: a TCP server on every address of the host.
	RuleListen = "a TCP server on the host's network"
)

// maxViolations bounds the distinct entries of one command's report.
const maxViolations = 1000

// Report returns what the sandbox refused the command, repeats merged into
// one entry with a Count, in the order first seen. It is complete once
// Wait has returned. It lists writes only when [Config.Report] (or
// OnViolation) is set; what a protected name kept from the host (see
// [Cmd.Dropped]) is listed always, as ViolationPlant.
func (c *Cmd) Report() []Violation { return c.report.list() }

// recordViolation adds v (Count 0 counts as 1) to the command's report and
// hands it to Config.OnViolation the first time it is seen. It is the one
// way every layer reports a refusal: the network proxy's refused
// destinations and the limits the command hit come in through it. Safe
// for concurrent use.
//
// A refused network destination is also said at once, in one line through
// Config.Logf, which the CLI prints on stderr: "corral: blocked
// evil.example:443 (not in allowed domains)".
func (c *Cmd) recordViolation(v Violation) {
	if c.report.add(v) {
		c.sayRefusedDestination(v)
		c.callOnViolation(v)
	}
}

// noteViolation is a refusal the backend saw while the command runs, the
// first time: the caller hears of it now, and the backend's complete list
// (with counts) is recorded when the command exits.
func (c *Cmd) noteViolation(v Violation) {
	if c.report.announce(v) {
		c.sayRefusedDestination(v)
		c.callOnViolation(v)
	}
}

// sayRefusedDestination says a refused network destination in one line
// through Config.Logf (see recordViolation).
func (c *Cmd) sayRefusedDestination(v Violation) {
	if v.Kind == ViolationNetwork && c.sb != nil && c.sb.logf != nil {
		c.sb.logf("%s", violationLine(v))
	}
}

func (c *Cmd) callOnViolation(v Violation) {
	if c.sb != nil && c.sb.spec.onViolation != nil {
		v.Count = max(v.Count, 1)
		c.sb.spec.onViolation(v)
	}
}

// reporter is a process whose backend reports refusals when it exits.
type reporter interface {
	Violations() []Violation
}

// collectViolations records, once the backend's Wait returned, what the
// backend reports, what the guard kept from the host and the limits the
// command hit.
func (c *Cmd) collectViolations() {
	if r, ok := c.proc.(reporter); ok {
		for _, v := range r.Violations() {
			if c.report.addAnnounced(v) {
				c.sayRefusedDestination(v)
				c.callOnViolation(v)
			}
		}
	}
	for _, line := range c.Dropped() {
		c.recordViolation(droppedViolation(line))
	}
	for _, v := range c.LimitsHit() {
		c.recordViolation(v)
	}
}

// droppedViolation turns a line of Dropped ("path: why") into a
// ViolationPlant naming the protected name.
func droppedViolation(line string) Violation {
	p, _, _ := strings.Cut(line, ": ")
	return Violation{Kind: ViolationPlant, Target: p, Rule: "protected: " + protectedIn(p)}
}

// protectedIn is the protected name p lies in, as ProtectedNames lists it
// (with the git directory's own entry: ".git/hooks"), or p's last
// component when none matches.
func protectedIn(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	names := ProtectedNames()
	for i := range parts {
		for n := len(parts) - i; n >= 1; n-- {
			name := strings.Join(parts[i:i+n], "/")
			if !slices.Contains(names, name) {
				continue
			}
			if name == ".git" && i+1 < len(parts) {
				name += "/" + parts[i+1]
			}
			return name
		}
	}
	return path.Base(p)
}

type violationKey struct {
	kind         ViolationKind
	target, rule string
	probe        bool
}

func keyOf(v Violation) violationKey { return violationKey{v.Kind, v.Target, v.Rule, v.Probe} }

// violations is a command's report: bounded (maxViolations distinct
// entries, then one per kind), safe for concurrent use.
type violations struct {
	mu        sync.Mutex
	log       *tally.Log[violationKey, Violation]
	announced map[violationKey]bool // told to the caller, not yet counted
}

// add counts v and reports whether it is new.
func (r *violations) add(v Violation) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addLocked(v)
}

func (r *violations) addLocked(v Violation) bool {
	if r.log == nil {
		r.log = tally.New[violationKey, Violation](maxViolations)
	}
	n := max(v.Count, 1)
	isNew, kept := r.log.Add(keyOf(v), v, n)
	if !kept {
		more := Violation{Kind: v.Kind, Rule: RuleOmitted}
		r.log.Overflow(keyOf(more), more, n)
	}
	return isNew
}

// announce marks v as told to the caller and reports whether it was new.
func (r *violations) announce(v Violation) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(v)
	if r.announced[k] || r.log != nil && r.has(k) || len(r.announced) >= maxViolations {
		return false
	}
	if r.announced == nil {
		r.announced = make(map[violationKey]bool)
	}
	r.announced[k] = true
	return true
}

func (r *violations) has(k violationKey) bool {
	for _, it := range r.log.Items() {
		if keyOf(it.Value) == k {
			return true
		}
	}
	return false
}

// addAnnounced counts v and reports whether it is new and was not
// announced.
func (r *violations) addAnnounced(v Violation) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(v)
	was := r.announced[k]
	delete(r.announced, k)
	return r.addLocked(v) && !was
}

func (r *violations) list() []Violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.log == nil {
		return nil
	}
	out := make([]Violation, 0, r.log.Len())
	for _, it := range r.log.Items() {
		v := it.Value
		v.Count = it.Count
		out = append(out, v)
	}
	return out
}

// Summary says in one line what vs holds, for a person or a model reading
// a command's output: the most significant group of refusals (by kind, see
// significance, then by count) with an example and what would allow it,
// and how many others; "" for none. Probes (see [Violation.Probe]) are
// left out. For instance "refused 3 writes (outside the writable paths),
// e.g. /home/u/.bashrc; --writable (writable_paths) allows it; 2 other
// refusals".
func Summary(vs []Violation) string {
	type group struct {
		kind    ViolationKind
		rule    string
		count   int
		example Violation
	}
	var groups []*group
	total := 0
	for _, v := range vs {
		if v.Probe {
			continue
		}
		n := max(v.Count, 1)
		total += n
		i := slices.IndexFunc(groups, func(g *group) bool { return g.kind == v.Kind && g.rule == v.Rule })
		if i < 0 {
			groups = append(groups, &group{kind: v.Kind, rule: v.Rule, example: v})
			i = len(groups) - 1
		}
		g := groups[i]
		g.count += n
		if g.example.Target == "" {
			g.example = v
		}
	}
	if len(groups) == 0 {
		return ""
	}
	top := groups[0]
	for _, g := range groups[1:] {
		if d := significance(g.kind) - significance(top.kind); d > 0 || d == 0 && g.count > top.count {
			top = g
		}
	}
	s := fmt.Sprintf("refused %d %s (%s)", top.count, kindNoun(top.kind, top.count), top.rule)
	if top.example.Target != "" {
		s += ", e.g. " + top.example.Target
	}
	if top.rule != RuleOmitted {
		s += "; " + allowsClause(top.example)
	}
	if rest := total - top.count; rest > 0 {
		s += fmt.Sprintf("; %d other %s", rest, plural("refusal", rest))
	}
	return s
}

// significance orders the kinds of refusal by what they say of a command,
// the most significant highest: code planted for the host, a hidden path
// read, a write refused, a destination, a system call, a limit.
func significance(k ViolationKind) int {
	order := []ViolationKind{ViolationLimit, ViolationSyscall, ViolationNetwork, ViolationWrite, ViolationRead, ViolationPlant}
	return slices.Index(order, k)
}

// allowsClause says what would allow v: "--writable (writable_paths)
// allows it", "no setting allows it".
func allowsClause(v Violation) string {
	if a := v.Allows(); a != "" {
		return a + " allows it"
	}
	return "no setting allows it"
}

// Allows names what would allow v: its Allow when set, else what its kind
// and rule say, as the corral run flag and (in parentheses) the config
// file's key; "" when nothing does.
func (v Violation) Allows() string {
	if v.Allow != "" {
		return v.Allow
	}
	rule, target := v.Rule, v.Target
	switch {
	case v.Kind == ViolationWrite && rule == "outside the writable paths":
		return "--writable (writable_paths)"
	case strings.HasPrefix(rule, "read-only by --read-only "):
		return "leaving out " + strings.TrimPrefix(rule, "read-only by ") + " (read_only_paths)"
	case strings.HasPrefix(rule, "hidden by --hide "):
		return "leaving out " + strings.TrimPrefix(rule, "hidden by ") + " (hidden_paths)"
	case strings.HasPrefix(rule, "hidden credential store "):
		return "--reveal " + strings.TrimPrefix(rule, "hidden credential store ") + " (reveal)"
	case strings.HasPrefix(rule, "protected: "):
		name := strings.TrimPrefix(rule, "protected: ")
		if strings.HasPrefix(name, ".git/") {
			name = ".git" // planting allowed for a repository's whole git directory
		}
		return "allow_planting " + strconv.Quote(name) + " in the config file"
	case v.Kind == ViolationNetwork && rule == RuleHostPort && hostPortTarget(target):
		port, _ := loopbackPort(target)
		return "--allow-host-port " + port + " (host_ports)"
	case v.Kind == ViolationNetwork && strings.HasPrefix(rule, "not in allowed domains"):
		host, _, _ := strings.Cut(target, ":")
		if strings.HasPrefix(target, "[") {
			host = target
		}
		return "--allow-domain " + host + " (allowed_domains)"
	case v.Kind == ViolationNetwork && strings.Contains(rule, "not in allowed IPs"):
		return "--allow-ip (allowed_ips)"
	case v.Kind == ViolationSyscall && (strings.HasPrefix(target, "socket(AF_UNIX)") || strings.HasPrefix(target, "socketpair(AF_UNIX)")):
		return "--allow-unix-sockets (allow_unix_sockets)"
	case v.Kind == ViolationSyscall && (target == "ptrace" || target == "pidfd_getfd"):
		return "allow_ptrace = true in the config file"
	case v.Kind == ViolationSyscall && strings.HasPrefix(target, "socket(AF_INET") && strings.Contains(rule, "no network"):
		return "--net host (network)"
	}
	return ""
}

func kindNoun(k ViolationKind, n int) string {
	nouns := map[ViolationKind]string{
		ViolationWrite: "write", ViolationRead: "read", ViolationPlant: "write",
		ViolationNetwork: "connection", ViolationSyscall: "system call", ViolationLimit: "limit",
	}
	noun, ok := nouns[k]
	if !ok {
		noun = string(k)
	}
	return plural(noun, n)
}

func plural(s string, n int) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
