package nsjail

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A bare sandbox (the landlock rung) has no namespaces: the init starts the
// command on the host, confined by Landlock and seccomp alone. Without a PID
// namespace nothing ends the command's leftovers, so the init becomes their
// subreaper and kills them itself, from a thread outside the command's
// Landlock domain (see landlock.Restrict): scoping would stop the domain's
// own threads from signalling them.

// prepareBare makes the init the reaper of every orphan the command leaves.
func prepareBare() *failure {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return failureOf(LayerInit, "", os.NewSyscallError("prctl(SET_CHILD_SUBREAPER)", err))
	}
	return nil
}

// cleanUpOnce lets the main path and the lifeline race to clean up.
var cleanUpOnce sync.Once

// cleanUp ends a bare sandbox: every process it started is killed and
// reaped, and its temp dir removed. A namespaced sandbox needs nothing: its
// PID namespace and tmpfs die with the init.
//
// The work runs on a goroutine of its own, off the locked thread: Landlock
// confines that thread (as it does the command), and would stop it from
// removing the temp dir from the directory that holds it.
func cleanUp(s *setup) {
	if !s.Bare {
		return
	}
	cleanUpOnce.Do(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			sweep(5 * time.Second)
			if s.TmpDir != "" {
				os.RemoveAll(s.TmpDir)
			}
		}()
		<-done
	})
}

// sweep kills descendants until none is left. Killing a process hands its
// children to us, so it takes a few rounds; a fork bomb cannot outrun it for
// long, and the limit bounds the wait if something does.
func sweep(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		killDescendants()
		if !reapExited() {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// reapExited collects every exited child and reports whether any is left.
func reapExited() bool {
	for {
		pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
		case err != nil:
			return false // ECHILD: no children at all
		case pid == 0:
			return true // children left, none exited yet
		}
	}
}

// killDescendants sends SIGKILL to every process below the init.
func killDescendants() {
	for _, pid := range descendants(os.Getpid(), readParents()) {
		unix.Kill(pid, unix.SIGKILL)
	}
}

// descendants returns every process below root in the parent map.
func descendants(root int, parent map[int]int) []int {
	children := map[int][]int{}
	for pid, ppid := range parent {
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// readParents maps every visible pid to its parent.
func readParents() map[int]int {
	ents, _ := os.ReadDir("/proc")
	out := make(map[int]int, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if ppid, ok := parseParent(string(b)); ok {
			out[pid] = ppid
		}
	}
	return out
}

// parseParent reads the ppid from a /proc/<pid>/stat line. The command name
// may hold spaces and parentheses, so fields count from the last ')'.
func parseParent(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
