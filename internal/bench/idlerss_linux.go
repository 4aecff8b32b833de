package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/corralhq/corral"
)

// idleInitRSS waits until sb has built its sandboxes ahead, then returns
// the mean VmRSS and the mean private memory (Private_Clean and
// Private_Dirty of smaps_rollup: what is not shared with the other inits
// of the same binary), in KiB, of their inits and how many there are. The
// inits are this process's children (direct clones) or its spawner's.
func idleInitRSS(ctx context.Context, sb *corral.Sandbox) (rss, private int64, n int, err error) {
	if err := sb.Warm(ctx); err != nil {
		return 0, 0, 0, &SandboxError{Op: "warm", Err: err}
	}
	self := os.Getpid()
	procs := processes()
	for pid, p := range procs {
		if !p.init || (p.ppid != self && procs[p.ppid].ppid != self) {
			continue
		}
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		status, err1 := os.ReadFile(dir + "/status")
		smaps, err2 := os.ReadFile(dir + "/smaps_rollup")
		kb, ok1 := procKB(status, "VmRSS")
		clean, ok2 := procKB(smaps, "Private_Clean")
		dirty, ok3 := procKB(smaps, "Private_Dirty")
		if err1 == nil && err2 == nil && ok1 && ok2 && ok3 {
			rss += kb
			private += clean + dirty
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0, nil
	}
	return rss / int64(n), private / int64(n), n, nil
}

type procInfo struct {
	ppid int
	init bool // a sandbox's init
}

// processes reads every process's parent and whether it is an init.
func processes() map[int]procInfo {
	out := map[int]procInfo{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		status, err := os.ReadFile(d + "/status")
		if err != nil {
			continue
		}
		ppid, _ := procKB(status, "PPid")
		cmdline, _ := os.ReadFile(d + "/cmdline")
		args := bytes.Split(cmdline, []byte{0})
		out[pid] = procInfo{ppid: int(ppid), init: len(args) > 1 && string(args[1]) == "__sandbox-init"}
	}
	return out
}
