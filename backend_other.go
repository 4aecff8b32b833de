//go:build !linux && !darwin

package corral

import (
	"fmt"
	"runtime"
)

func registerEntrypoints() {}

func newBackend(*spec) (backend, error) {
	return nil, &SetupError{Layer: LayerPlatform, Err: fmt.Errorf("no sandbox backend on %s; Mode %q runs commands unsandboxed", runtime.GOOS, ModeDisabled)}
}
