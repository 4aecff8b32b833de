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
// the mean VmRSS, in KiB, of their inits and how many there are. The
// inits are this process's children (direct clones) or its spawner's.
func idleInitRSS(ctx context.Context, sb *corral.Sandbox) (int64, int, error) {
	if err := sb.Warm(ctx); err != nil {
		return 0, 0, &SandboxError{Op: "warm", Err: err}
	}
	self := os.Getpid()
	procs := processes()
	var sum int64
	n := 0
	for pid, p := range procs {
		if p.init && (p.ppid == self || procs[p.ppid].ppid == self) {
			data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
			if kb, ok := procKB(data, "VmRSS"); err == nil && ok {
				sum += kb
				n++
			}
		}
	}
	if n == 0 {
		return 0, 0, nil
	}
	return sum / int64(n), n, nil
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
