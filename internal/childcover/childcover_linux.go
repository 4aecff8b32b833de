package childcover

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/reexec"
)

// Init stands in for init (corral.Init, or a package's own registration
// followed by reexec.Dispatch) first thing in TestMain:
//
//	func TestMain(m *testing.M) {
//		if childcover.Init(corral.Init) {
//			return
//		}
//		os.Exit(m.Run())
//	}
//
// Without -cover, or in the test process itself, it is init.
func Init(init func() bool) bool {
	if len(os.Args) < 2 || !strings.HasPrefix(os.Args[1], "__") || testing.CoverMode() == "" {
		return init()
	}
	dir := ancestorCoverDir()
	if dir == "" {
		return init()
	}
	// Register the entrypoints without dispatching, to run the one named
	// here under our own exit.
	args := os.Args
	os.Args = args[:1]
	init()
	os.Args = args
	fn, ok := reexec.Lookup(args[1])
	if !ok {
		return false
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		os.Setenv("GOCOVERDIR", "/proc/self/fd/"+strconv.Itoa(fd))
	}
	code := fn(args[2:])
	go os.Exit(code) // the exit hooks write the counters, off the locked thread
	select {}
}

// ancestorCoverDir returns the coverage directory of the nearest ancestor
// that has one, or "". It reads the host's /proc, which an init still sees
// when it starts: its own pid there, then each parent's.
func ancestorCoverDir() string {
	self, err := os.Readlink("/proc/self")
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(self)
	if err != nil {
		return ""
	}
	for range 16 {
		if pid = parent(pid); pid <= 1 {
			return ""
		}
		if dir := coverDirOf(pid); dir != "" {
			return dir
		}
	}
	return ""
}

func parent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// coverDirOf returns the coverage directory process pid writes to: its
// last -test.gocoverdir flag, else its GOCOVERDIR, made absolute against
// its working directory.
func coverDirOf(pid int) string {
	proc := "/proc/" + strconv.Itoa(pid)
	dir := ""
	if b, err := os.ReadFile(proc + "/cmdline"); err == nil {
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		for i, a := range args {
			a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
			switch {
			case strings.HasPrefix(a, "test.gocoverdir="):
				dir = strings.TrimPrefix(a, "test.gocoverdir=")
			case a == "test.gocoverdir" && i+1 < len(args):
				dir = args[i+1]
			}
		}
	}
	if dir == "" {
		if b, err := os.ReadFile(proc + "/environ"); err == nil {
			for _, kv := range strings.Split(string(b), "\x00") {
				if v, ok := strings.CutPrefix(kv, "GOCOVERDIR="); ok {
					dir = v
				}
			}
		}
	}
	if dir != "" && !filepath.IsAbs(dir) {
		cwd, err := os.Readlink(proc + "/cwd")
		if err != nil {
			return ""
		}
		dir = filepath.Join(cwd, dir)
	}
	return dir
}
