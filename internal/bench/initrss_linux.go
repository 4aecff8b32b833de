package bench

import (
	"context"
	"fmt"
	"os"

	"github.com/corralhq/corral"
)

// rssSamples is how many sandboxes initPeakRSS looks at.
const rssSamples = 3

// initPeakRSS returns the largest VmHWM, in KiB, of a few sandboxes' inits.
func initPeakRSS(ctx context.Context, sb *corral.Sandbox) (int64, error) {
	var peak int64
	for range rssSamples {
		kb, err := oneInitRSS(ctx, sb)
		if err != nil {
			return 0, err
		}
		peak = max(peak, kb)
	}
	return peak, nil
}

// oneInitRSS starts cat in a sandbox and, while cat waits on its standard
// input, reads the init's status from the host: the init has built the
// sandbox and started the command by then, so its high-water mark includes
// all of that.
func oneInitRSS(ctx context.Context, sb *corral.Sandbox) (int64, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("init RSS: %w", err)
	}
	defer w.Close()
	c := sb.Command(ctx, "/bin/cat")
	c.Stdin = r
	err = c.Start()
	r.Close()
	if err != nil {
		return 0, &SandboxError{Op: "spawn /bin/cat", Err: err}
	}
	status := fmt.Sprintf("/proc/%d/status", c.Process.Pid)
	data, readErr := os.ReadFile(status)
	w.Close()
	if err := c.Wait(); err != nil {
		return 0, &SandboxError{Op: "wait /bin/cat", Err: err}
	}
	if readErr != nil {
		return 0, fmt.Errorf("init RSS: %w", readErr)
	}
	kb, ok := procKB(data, "VmHWM")
	if !ok {
		return 0, fmt.Errorf("init RSS: %s: no readable VmHWM line", status)
	}
	return kb, nil
}
