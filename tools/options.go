package tools

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/corralhq/corral"
)

// Defaults for Options fields left zero.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultMaxTimeout     = 30 * time.Minute
	DefaultMaxOutputBytes = 32 << 10
)

// Options configures Shell and Exec. The zero value is usable.
type Options struct {
	// ToolsBin is put first on the command's PATH, so programs installed
	// there by the system are found before the host's. Give the same
	// directory to the sandbox as read-only (see [WithToolsBin]): commands
	// run what is there but cannot replace it.
	ToolsBin string
	// DefaultTimeout applies when a call gives no timeout.
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout a call may ask for.
	MaxTimeout time.Duration
	// MaxOutputBytes is how much of each of stdout and stderr is kept; the
	// middle of longer output is cut.
	MaxOutputBytes int
}

func (o Options) withDefaults() (Options, error) {
	if o.DefaultTimeout == 0 {
		o.DefaultTimeout = DefaultTimeout
	}
	if o.MaxTimeout == 0 {
		o.MaxTimeout = max(DefaultMaxTimeout, o.DefaultTimeout)
	}
	if o.MaxOutputBytes == 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	switch {
	case o.DefaultTimeout < 0 || o.MaxTimeout < o.DefaultTimeout:
		return o, fmt.Errorf("tools: options: timeouts: want 0 < DefaultTimeout <= MaxTimeout, have %v and %v", o.DefaultTimeout, o.MaxTimeout)
	case o.MaxOutputBytes < 0:
		return o, fmt.Errorf("tools: options: MaxOutputBytes: negative (%d)", o.MaxOutputBytes)
	case o.ToolsBin != "" && !filepath.IsAbs(o.ToolsBin):
		return o, fmt.Errorf("tools: options: ToolsBin: %s: not an absolute path", o.ToolsBin)
	}
	return o, nil
}

// ToolsBinDir is where an instance keeps programs installed for its agents:
// {instanceDir}/tools/bin.
func ToolsBinDir(instanceDir string) string {
	return filepath.Join(instanceDir, "tools", "bin")
}

// WithToolsBin returns cfg with dir added to its ReadOnlyPaths. The sandbox
// root is read-only already; listing dir keeps it read-only even when a
// writable path contains it, so a sandboxed command cannot plant a program
// that later runs first on every PATH. dir must exist before corral.New.
// Installing programs there is a job for the system, outside the sandbox.
func WithToolsBin(cfg corral.Config, dir string) corral.Config {
	if !slices.Contains(cfg.ReadOnlyPaths, dir) {
		cfg.ReadOnlyPaths = append(slices.Clone(cfg.ReadOnlyPaths), dir)
	}
	return cfg
}
