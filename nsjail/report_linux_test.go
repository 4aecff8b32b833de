package nsjail

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerdict(t *testing.T) {
	in := pathsView{
		writable:  []string{"/ws", "/data", "/base/ws"},
		readOnly:  []string{"/ws/.agent", "/base"},
		hidden:    []string{"/home/u/.ssh"},
		protected: []string{".vscode", ".bashrc"},
	}
	full := judge{in: in, open: []string{"/tmp", "/dev/shm"}, protected: []string{"/ws/sub/.vscode"}}
	bare := judge{in: in, bare: true, open: []string{"/tmp/corral-1"}}
	cases := []struct {
		name   string
		j      judge
		path   string
		kind   ViolationKind
		reason Reason
		match  string
	}{
		{"in the workspace", full, "/ws/a/b", "", "", ""},
		{"a further writable path", full, "/data/x", "", "", ""},
		{"private tmp", full, "/tmp/x", "", "", ""},
		{"outside", full, "/etc/passwd", KindWrite, ReasonOutside, ""},
		{"a sibling sharing a prefix", full, "/wsx/a", KindWrite, ReasonOutside, ""},
		{"read-only under the workspace", full, "/ws/.agent/state", KindWrite, ReasonReadOnly, "/ws/.agent"},
		{"writable under a read-only parent", full, "/base/ws/f", "", "", ""},
		{"beside it in the read-only parent", full, "/base/other", KindWrite, ReasonReadOnly, "/base"},
		{"hidden", full, "/home/u/.ssh/config", KindWrite, ReasonHidden, "/home/u/.ssh"},
		{"stdout by name", full, "/dev/stdout", "", "", ""},
		{"own descriptor", full, "/proc/self/fd/1", "", "", ""},
		{"a protected entry bound read-only", full, "/ws/sub/.vscode/settings.json", KindPlant, ReasonProtected, ".vscode"},
		{"a protected name created anew (held at exit, not refused)", full, "/ws/.bashrc", "", "", ""},
		{"bare: tmp of the host", bare, "/tmp/other", KindWrite, ReasonOutside, ""},
		{"bare: its own tmp", bare, "/tmp/corral-1/x", "", "", ""},
		{"bare: protected at the top of a root", bare, "/data/.bashrc", KindPlant, ReasonProtected, ".bashrc"},
		{"bare: in the workspace", bare, "/ws/f", "", "", ""},
	}
	for _, c := range cases {
		kind, reason, match := c.j.verdict(c.path)
		assert.Equal(t, c.kind, kind, c.name)
		assert.Equal(t, c.reason, reason, c.name)
		assert.Equal(t, c.match, match, c.name)
	}
}

// A command naming a new path each time fills the log only up to its
// bound; the rest is one count.
func TestListenerLogBounded(t *testing.T) {
	l := newListener(-1, nil, judge{})
	for i := range 10 * maxViolations {
		l.record(Violation{Kind: KindWrite, Path: fmt.Sprintf("/etc/f%d", i), Reason: ReasonOutside})
	}
	l.record(Violation{Kind: KindWrite, Path: "/etc/f0", Reason: ReasonOutside})
	vs := l.report()
	require.Len(t, vs, maxViolations+1)
	assert.Equal(t, 2, vs[0].Count, "a repeat is merged")
	last := vs[maxViolations]
	assert.Equal(t, ReasonOmitted, last.Reason)
	assert.Equal(t, 9*maxViolations, last.Count)
}
