package zones

import "fmt"

// Policy is the consent one kind of change in a zone needs.
type Policy string

const (
	// PreApproved: the change proceeds without asking.
	PreApproved Policy = "preApproved"
	// Ask: the change is shown to the Approver, which allows or refuses
	// it. The default for writable zones.
	Ask Policy = "ask"
	// Blocked: the change is refused.
	Blocked Policy = "blocked"
)

// rank orders policies from loosest to strictest.
func (p Policy) rank() int {
	switch p {
	case PreApproved:
		return 0
	case Ask:
		return 1
	}
	return 2
}

// ParsePolicy returns the policy s names.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case PreApproved, Ask, Blocked:
		return Policy(s), nil
	}
	return "", fmt.Errorf("%q is not an approval; want \"preApproved\", \"ask\" or \"blocked\"", s)
}

// Approval is a zone's consent, separate from its mode: a writable zone
// can still need each write approved.
type Approval struct {
	// Write covers creating and changing files and directories.
	Write Policy `json:"write"`
	// Delete covers removing them.
	Delete Policy `json:"delete"`
}

// DefaultApproval is the approval of a zone that sets none: ask for each
// change in a writable zone; a read-only zone allows no change at all.
func DefaultApproval(m Mode) Approval {
	if m == ReadWrite {
		return Approval{Write: Ask, Delete: Ask}
	}
	return Approval{Write: Blocked, Delete: Blocked}
}

// check accepts a policy left empty: it takes its default.
func (a Approval) check() error {
	if _, err := ParsePolicy(string(a.Write)); err != nil && a.Write != "" {
		return fmt.Errorf("approval write: %w", err)
	}
	if _, err := ParsePolicy(string(a.Delete)); err != nil && a.Delete != "" {
		return fmt.Errorf("approval delete: %w", err)
	}
	return nil
}

// For returns the policy for op.
func (a Approval) For(op Op) Policy {
	if op == OpDelete {
		return a.Delete
	}
	return a.Write
}

// stricter returns the stricter of p and q.
func stricter(p, q Policy) Policy {
	if q.rank() > p.rank() {
		return q
	}
	return p
}
