package landlock

import (
	"fmt"

	gl "github.com/landlock-lsm/go-landlock/landlock"
)

// Restrict enforces p on every thread of the calling process and on every
// process it starts afterwards. It sets no_new_privs. Nothing is downgraded:
// a policy the kernel cannot enforce in full is an error.
func Restrict(p *Policy) error {
	cfg, err := gl.NewConfig(gl.AccessFSSet(p.HandledFS), gl.AccessNetSet(p.HandledNet), gl.ScopedSet(p.Scoped))
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	rules := make([]gl.Rule, 0, len(p.Rules))
	for _, r := range p.Rules {
		rules = append(rules, gl.PathAccess(gl.AccessFSSet(r.Access), r.Path))
	}
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}
