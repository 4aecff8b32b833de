package corral

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
)

// chooseSeatbelt is the macOS ladder: the seatbelt rung when sandbox-exec
// works, else nothing, and that only with FallbackWarn.
func chooseSeatbelt(h *host, n needs) (*rungPlan, error) {
	sb := h.status(LayerSeatbelt)
	if sb.Available {
		return &rungPlan{rung: RungSeatbelt}, nil
	}
	if n.fallback != FallbackWarn {
		return nil, refusal(sb, RungNone)
	}
	return &rungPlan{rung: RungNone, without: []LayerStatus{sb}}, nil
}

// probeCommand is what the probes run under a profile.
const probeCommand = "/usr/bin/true"

// seatbeltDoctorProfile allows everything: the doctor asks only whether
// sandbox-exec can apply a profile at all (it cannot, for one, inside
// another sandbox). New applies the real profile in its own probe.
const seatbeltDoctorProfile = "(version 1)(allow default)"

// probeSeatbelt reports whether runner, sandbox-exec by its absolute path,
// exists and applies a profile to probeCommand.
func probeSeatbelt(runner string) LayerStatus {
	l := LayerStatus{Name: LayerSeatbelt}
	fi, err := os.Stat(runner)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		l.Reason = runner + " not found"
		return l
	case err != nil:
		l.Reason = err.Error()
		return l
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		l.Reason = runner + " is not executable"
		return l
	}
	stderr := &prefixBuffer{max: 4 << 10}
	cmd := &exec.Cmd{
		Path:   runner,
		Args:   []string{runner, "-p", seatbeltDoctorProfile, "--", probeCommand},
		Env:    []string{},
		Stderr: stderr,
	}
	if err := cmd.Run(); err != nil {
		msg := strings.Join(strings.Fields(stderr.buf.String()), " ")
		if msg == "" {
			msg = err.Error()
		}
		l.Reason = fmt.Sprintf("%s cannot apply a profile: %s", runner, msg)
		return l
	}
	l.Available, l.Detail = true, runner
	return l
}
