package corral

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummary(t *testing.T) {
	w := func(target string, n int) Violation {
		return Violation{Kind: ViolationWrite, Target: target, Rule: "outside the writable paths", Count: n}
	}
	probe := Violation{Kind: ViolationSyscall, Target: "socket(AF_UNIX)", Rule: "system call filter, EPERM", Count: 4, Probe: true}
	tests := []struct {
		name string
		vs   []Violation
		want string
	}{
		{"none", nil, ""},
		{"one", []Violation{w("/home/u/.bashrc", 1)},
			"refused 1 write (outside the writable paths), e.g. /home/u/.bashrc; --writable (writable_paths) allows it"},
		{"the most significant first", []Violation{
			{Kind: ViolationSyscall, Target: "socket(AF_UNIX)", Rule: "system call filter, EPERM", Count: 4},
			w("/etc/x", 1),
		}, "refused 1 write (outside the writable paths), e.g. /etc/x; --writable (writable_paths) allows it; 4 other refusals"},
		{"a plant before writes", []Violation{
			w("/home/u/.bashrc", 2),
			{Kind: ViolationPlant, Target: "/ws/.git/hooks", Rule: "protected: .git/hooks", Count: 1},
		}, `refused 1 write (protected: .git/hooks), e.g. /ws/.git/hooks; allow_planting ".git" in the config file allows it; 2 other refusals`},
		{"by count within a kind", []Violation{
			w("/etc/x", 1),
			{Kind: ViolationWrite, Target: "/opt/y", Rule: "read-only by --read-only /opt", Count: 3},
		}, "refused 3 writes (read-only by --read-only /opt), e.g. /opt/y; leaving out --read-only /opt (read_only_paths) allows it; 1 other refusal"},
		{"probes are left out", []Violation{probe}, ""},
		{"probes are not counted", []Violation{probe, w("/etc/x", 1)},
			"refused 1 write (outside the writable paths), e.g. /etc/x; --writable (writable_paths) allows it"},
		{"nothing allows it", []Violation{{Kind: ViolationSyscall, Target: "mount", Rule: "system call filter, EPERM", Count: 1}},
			"refused 1 system call (system call filter, EPERM), e.g. mount; no setting allows it"},
		{"network", []Violation{{Kind: ViolationNetwork, Target: "evil.example:443", Rule: "not in allowed domains", Count: 2}},
			"refused 2 connections (not in allowed domains), e.g. evil.example:443; --allow-domain evil.example (allowed_domains) allows it"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Summary(tt.vs), tt.name)
	}
}

// Each refusal names what would allow it, as a flag and a config key.
func TestViolationAllows(t *testing.T) {
	tests := []struct {
		v    Violation
		want string
	}{
		{Violation{Kind: ViolationWrite, Rule: "outside the writable paths"}, "--writable (writable_paths)"},
		{Violation{Kind: ViolationRead, Rule: "hidden by --hide ~/secret"}, "leaving out --hide ~/secret (hidden_paths)"},
		{Violation{Kind: ViolationRead, Rule: "hidden credential store ~/.aws"}, "--reveal ~/.aws (reveal)"},
		{Violation{Kind: ViolationPlant, Rule: "protected: .vscode"}, `allow_planting ".vscode" in the config file`},
		{Violation{Kind: ViolationSyscall, Target: "socket(AF_UNIX)", Rule: "system call filter, EPERM"}, "--allow-unix-sockets (allow_unix_sockets)"},
		{Violation{Kind: ViolationSyscall, Target: "ptrace", Rule: "system call filter, EPERM"}, "allow_ptrace = true in the config file"},
		{Violation{Kind: ViolationNetwork, Target: "[::1]:22", Rule: "an IP address not in allowed IPs"}, "--allow-ip (allowed_ips)"},
		{Violation{Kind: ViolationWrite, Rule: "read-only: the sandbox's policy file ~/.corral.toml"}, ""},
		{Violation{Kind: ViolationSyscall, Target: "mount", Rule: "system call filter, EPERM"}, ""},
		{Violation{Kind: ViolationWrite, Rule: "outside the writable paths", Allow: "given"}, "given"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.v.Allows(), tt.v.Rule)
	}
}

func TestDroppedViolation(t *testing.T) {
	tests := []struct{ line, target, rule string }{
		{"/ws/.git/hooks: not an allowed directory", "/ws/.git/hooks", "protected: .git/hooks"},
		{"/ws/sub/.vscode: new, held in /ws/.corral-held/x", "/ws/sub/.vscode", "protected: .vscode"},
		{"/ws/.config/fish: replaced", "/ws/.config/fish", "protected: .config/fish"},
		{"/ws/.git: new repository, kept what is allowed", "/ws/.git", "protected: .git"},
	}
	for _, tt := range tests {
		v := droppedViolation(tt.line)
		assert.Equal(t, Violation{Kind: ViolationPlant, Target: tt.target, Rule: tt.rule}, v, tt.line)
	}
}

// recordViolation is how every layer feeds the report: repeats merge,
// the callback hears each entry once, and the report stays bounded.
func TestRecordViolation(t *testing.T) {
	var heard []Violation
	c := &Cmd{sb: &Sandbox{spec: &spec{onViolation: func(v Violation) { heard = append(heard, v) }}}}
	net := Violation{Kind: ViolationNetwork, Target: "evil.example:443", Rule: "not in allowed domains"}
	c.recordViolation(net)
	c.recordViolation(net)
	c.recordViolation(Violation{Kind: ViolationLimit, Target: "pids", Rule: "--pids 64", Count: 3})
	require.Equal(t, []Violation{
		{Kind: ViolationNetwork, Target: "evil.example:443", Rule: "not in allowed domains", Count: 2},
		{Kind: ViolationLimit, Target: "pids", Rule: "--pids 64", Count: 3},
	}, c.Report())
	assert.Len(t, heard, 2)
	assert.Equal(t, 1, heard[0].Count)

	for i := range 3 * maxViolations {
		c.recordViolation(Violation{Kind: ViolationNetwork, Target: fmt.Sprintf("h%d:443", i), Rule: "not in allowed domains"})
	}
	vs := c.Report()
	require.Len(t, vs, maxViolations+1)
	last := vs[len(vs)-1]
	assert.Equal(t, Violation{Kind: ViolationNetwork, Rule: RuleOmitted, Count: 2*maxViolations + 2}, last)
}

// A refusal heard while the command ran is not heard again when the
// complete list comes with its exit, and is counted as that list says.
func TestAnnouncedThenCollected(t *testing.T) {
	var heard int
	c := &Cmd{sb: &Sandbox{spec: &spec{onViolation: func(Violation) { heard++ }}}}
	v := Violation{Kind: ViolationWrite, Target: "/etc/x", Rule: "outside the writable paths", Count: 1}
	c.noteViolation(v)
	c.noteViolation(v)
	assert.Equal(t, 1, heard)
	v.Count = 5
	assert.False(t, c.report.addAnnounced(v))
	assert.Equal(t, []Violation{v}, c.Report())
}
