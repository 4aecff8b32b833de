package corral

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/corralhq/corral/nsjail"
)

// A call the filter refused is named with its errno, and with the
// policy's reason when one rule gives it.
func TestFilterViolation(t *testing.T) {
	var s spec
	cases := []struct {
		call, errno, rule string
	}{
		{"mount", "EPERM", "system call filter, EPERM: attaches filesystems, which could cover or reveal any path"},
		{"socket", "EPERM", "system call filter, EPERM"}, // a unix socket, or any network without one
		{"socket(AF_UNIX)", "EPERM", "system call filter, EPERM: " + socketWhy["AF_UNIX EPERM"]},
		{"socket(AF_INET6)", "EACCES", "system call filter, EACCES: " + socketWhy["AF_INET6 EACCES"]},
		{"read", "EPERM", "system call filter, EPERM"},
	}
	for _, c := range cases {
		v := s.violation(nsjail.Violation{Kind: nsjail.KindSyscall, Path: c.call, Reason: nsjail.ReasonFilter, Match: c.errno, Process: "sh", Count: 2})
		want := Violation{Kind: ViolationSyscall, Target: c.call, Rule: c.rule, Process: "sh", Count: 2}
		want.Allow = want.Allows()
		assert.Equal(t, want, v, c.call)
	}
	assert.Equal(t, "refused 2 system calls (system call filter, EPERM), e.g. read; no setting allows it",
		Summary([]Violation{{Kind: ViolationSyscall, Target: "read", Rule: "system call filter, EPERM", Count: 2}}))
	probe := s.violation(nsjail.Violation{Kind: nsjail.KindSyscall, Path: "socket(AF_UNIX)", Reason: nsjail.ReasonFilter, Match: "EPERM", Probe: true})
	assert.True(t, probe.Probe, "a probe stays marked")
}

// A read-only path inside a writable one is allowed by leaving its option
// out; one under no writable path needs --writable as well.
func TestReadOnlyAllow(t *testing.T) {
	s := spec{Workspace: "/ws", Writable: []string{"/srv/out"}}
	in := s.violation(nsjail.Violation{Kind: nsjail.KindWrite, Path: "/ws/data/x", Reason: nsjail.ReasonReadOnly, Match: "/ws/data"})
	assert.Equal(t, "leaving out --read-only /ws/data (read_only_paths)", in.Allow)
	out := s.violation(nsjail.Violation{Kind: nsjail.KindWrite, Path: "/opt/x", Reason: nsjail.ReasonReadOnly, Match: "/opt"})
	assert.Equal(t, "--writable (writable_paths) without --read-only /opt", out.Allow)
}
