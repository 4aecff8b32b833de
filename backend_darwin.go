package corral

import (
	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/seatbelt"
)

// registerEntrypoints registers nothing: sandbox-exec applies the profile
// and executes the command itself, so no copy of this program runs inside.
func registerEntrypoints() {}

func newBackend(s *spec) (backend, error) {
	if s.NoWorkspace {
		return nil, noWorkspaceRefusal(RungSeatbelt)
	}
	if s.hostNet() {
		return nil, s.hostNetRefusal(RungSeatbelt, false)
	}
	// Seatbelt applies no limits: asking for one follows the ladder.
	lp, err := planLimits(s.Limits, ladder.LimitHost{Rung: RungSeatbelt}, s.Fallback)
	if err != nil {
		return nil, err
	}
	if lp.warning != "" && s.logf != nil {
		s.logf("%s", lp.warning)
	}
	return seatbeltOrNone(s, seatbelt.SandboxExec)
}
