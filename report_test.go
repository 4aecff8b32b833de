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
	tests := []struct {
		name string
		vs   []Violation
		want string
	}{
		{"none", nil, ""},
		{"one", []Violation{w("/home/u/.bashrc", 1)}, "refused 1 write (outside the writable paths), e.g. /home/u/.bashrc"},
		{"a group and others", []Violation{
			{Kind: ViolationPlant, Target: "/ws/.git/hooks", Rule: "protected: .git/hooks", Count: 1},
			w("/home/u/.bashrc", 2), w("/etc/x", 1),
		}, "refused 3 writes (outside the writable paths), e.g. /home/u/.bashrc; 1 other refusal"},
		{"network", []Violation{{Kind: ViolationNetwork, Target: "evil.example:443", Rule: "not in allowed domains", Count: 2}},
			"refused 2 connections (not in allowed domains), e.g. evil.example:443"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Summary(tt.vs), tt.name)
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
