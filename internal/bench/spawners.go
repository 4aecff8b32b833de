package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"

	"github.com/corralhq/corral"
)

// sandbox spawns through the library, with no standard streams attached.
type sandbox struct{ sb *corral.Sandbox }

func (s *sandbox) spawn(ctx context.Context) error {
	if err := s.sb.Command(ctx, "/bin/true").Run(); err != nil {
		return &SandboxError{Op: "spawn /bin/true", Err: err}
	}
	return nil
}

func (s *sandbox) warm(ctx context.Context) error { return s.sb.Warm(ctx) }

// bwrap spawns bubblewrap with the isolation corral gives by default: a
// read-only root, fresh /dev and /proc, a private /tmp, the workspace
// writable, new user and PID namespaces and session, killed with its parent.
type bwrap struct {
	path      string
	workspace string
}

// lookBwrap finds bubblewrap on PATH.
func lookBwrap() (string, error) {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return "", fmt.Errorf("--vs-bwrap: bwrap not found on PATH (install bubblewrap): %w", err)
	}
	return p, nil
}

// BwrapArgs are bubblewrap's arguments for running argv with workspace ws.
func BwrapArgs(ws string, argv ...string) []string {
	return append([]string{
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", ws, ws, "--unshare-user", "--unshare-pid", "--new-session",
		"--die-with-parent", "--chdir", ws,
	}, argv...)
}

// spawn runs bubblewrap with no standard streams attached, as corral's
// spawns are, so neither pays for pipes. Only a failure is run again with its
// output captured, to say why.
func (b *bwrap) spawn(ctx context.Context) error {
	args := BwrapArgs(b.workspace, "/bin/true")
	if err := exec.CommandContext(ctx, b.path, args...).Run(); err != nil {
		out, _ := exec.CommandContext(ctx, b.path, args...).CombinedOutput()
		return fmt.Errorf("%s: %w: %s", b.path, err, bytes.TrimSpace(out))
	}
	return nil
}
