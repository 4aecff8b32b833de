package cli

import (
	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
)

// limitFlags are the resource limit flags: each sets the limit of the same
// name (corral.Limits).
var limitFlags = []struct {
	name  corral.Limit
	value string // the placeholder in help
	usage string
}{
	{corral.LimitMemory, "SIZE", "cap each process's memory at `SIZE`, shared memory refused (512M, 2G; with cgroup v2, the whole sandbox's)"},
	{corral.LimitPids, "N", "cap the command's processes and threads at `N` at once, the command itself among them (default 4096)"},
	{corral.LimitCPUs, "F", "cap the sandbox's CPU use at `F` CPUs (1.5; cgroup v2 only)"},
	{corral.LimitTmpSize, "SIZE", "cap the private /tmp and /dev/shm at `SIZE` each (default 1G)"},
	{corral.LimitFileSize, "SIZE", "cap the size of any file written at `SIZE`"},
	{corral.LimitOpenFiles, "N", "cap each process's open files at `N`"},
	{corral.LimitCPUTime, "DUR", "cap each process's CPU time at `DUR` (30s, 10m)"},
}

func (f *runFlags) registerLimits(cmd *cobra.Command) {
	f.limitValues = map[corral.Limit]*string{}
	for _, l := range limitFlags {
		v := new(string)
		f.limitValues[l.name] = v
		cmd.Flags().StringVar(v, string(l.name), "", l.usage+"; none for no limit")
	}
}

// readLimits reads the limit flags given into f.limits.
func (f *runFlags) readLimits() error {
	for _, l := range limitFlags {
		if !f.given(string(l.name)) {
			continue
		}
		v := *f.limitValues[l.name]
		if err := f.limits.Set(l.name, v); err != nil {
			return usageError("--%s %q: %v", l.name, v, err)
		}
	}
	return nil
}
