package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/corralhq/corral"
)

// SandboxCommand is a Check that runs argv in a sandbox built from cfg,
// as the agent's own commands would run, and passes when it exits 0:
// "aws sts get-caller-identity" proves the account works from inside. A
// failure's reason ends with the last line the command wrote.
func SandboxCommand(name string, cfg corral.Config, argv ...string) Check {
	return Check{Name: name, Run: func(ctx context.Context) error {
		if len(argv) == 0 {
			return errors.New("no command")
		}
		sb, err := corral.New(cfg)
		if err != nil {
			return err
		}
		defer sb.Close()
		var out bytes.Buffer
		cmd := sb.Command(ctx, argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			if last := lastLine(out.String()); last != "" {
				return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, last)
			}
			return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
		}
		return nil
	}}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
