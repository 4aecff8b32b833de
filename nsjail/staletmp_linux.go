package nsjail

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A bare sandbox's temp dir is made by the caller and removed by the
// caller or the init when the command ends. A caller killed by SIGKILL
// takes its spawner and inits with it (Pdeathsig), and nothing is left to
// remove the dir. So each is named after the process that made it, in its
// PID namespace, "corral-<pidns>-<pid>-<random>", and the first bare
// sandbox a process builds removes the dirs of processes of its own
// namespace that are gone.

// tmpPrefix is the start of the temp dirs this process makes.
func tmpPrefix() string {
	return fmt.Sprintf("corral-%d-%d-", pidNS(), os.Getpid())
}

func pidNS() uint64 {
	var st unix.Stat_t
	if unix.Stat("/proc/self/ns/pid", &st) != nil {
		return 0
	}
	return st.Ino
}

var sweepOnce sync.Once

// sweepStaleTmp removes, once per process, the temp dirs in base that
// processes of this PID namespace, owned by this user, made and left
// when they died.
func sweepStaleTmp(base string) {
	sweepOnce.Do(func() {
		if base == "" {
			base = os.TempDir()
		}
		ns := pidNS()
		if ns == 0 {
			return
		}
		dirs, _ := filepath.Glob(filepath.Join(base, fmt.Sprintf("corral-%d-*-*", ns)))
		for _, d := range dirs {
			rest := strings.TrimPrefix(filepath.Base(d), fmt.Sprintf("corral-%d-", ns))
			pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
			if err != nil || pid <= 0 || unix.Kill(pid, 0) != unix.ESRCH {
				continue
			}
			var st unix.Stat_t
			if unix.Lstat(d, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != uint32(os.Geteuid()) {
				continue
			}
			os.RemoveAll(d)
		}
	})
}
