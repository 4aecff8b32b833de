package nsjail

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/corralhq/corral/seccomp"
)

// The seccomp filter is most often one of the programs generated ahead,
// which every corral binary embeds: the setup then names it with its
// digest instead of carrying its 4 KiB in base64 through JSON, which both
// sides paid for on every spawn.

// nameSeccomp replaces s's filter by its name among the programs
// generated ahead, when it is one of them.
func nameSeccomp(s *setup) {
	if len(s.Seccomp) == 0 {
		return
	}
	if name, ok := seccomp.PrebuiltName(s.Seccomp); ok {
		s.SeccompName, s.SeccompSum = name, programSum(s.Seccomp)
		s.Seccomp = nil
	}
}

// resolveSeccomp loads the named program into s.Seccomp, checking that it
// is the very program the caller meant (a helper binary embeds its own).
func resolveSeccomp(s *setup) *failure {
	if s.SeccompName == "" {
		return nil
	}
	prog, err := seccomp.PrebuiltProgram(s.SeccompName)
	if err != nil {
		return failureOf(LayerSeccomp, "", err)
	}
	if programSum(prog) != s.SeccompSum {
		return failureOf(LayerSeccomp, "", errors.New("the filter "+s.SeccompName+" of this binary differs from the caller's: use a corral binary of the same version"))
	}
	s.Seccomp = prog
	return nil
}

func programSum(prog []byte) string {
	sum := sha256.Sum256(prog)
	return hex.EncodeToString(sum[:16])
}
