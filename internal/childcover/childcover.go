// Package childcover adds the coverage of a test binary's re-executed
// copies (a sandbox's spawner and init) to the coverage of the test, when
// the binary is built with -cover.
//
// A test binary built with -cover writes its counters at exit into the
// directory GOCOVERDIR names, and `go test -cover` counts every file it
// finds in the test's coverage directory. The re-executed copies would not
// get there on their own: they start with an empty environment, and an
// init runs in a mount tree of its own where the host's directory is not
// to be seen. So a copy looks up its test's coverage directory among its
// ancestors (the -test.gocoverdir flag `go test` passes the test binary,
// else a GOCOVERDIR in an ancestor's environment) before it builds
// anything, opens it, and points its own GOCOVERDIR at that descriptor
// (/proc/self/fd/N), which keeps naming the directory whatever the mount
// tree becomes. It exits from a goroutine of its own rather than from the
// init's main thread, which runs under the command's seccomp filter by
// then.
//
// Not collected: a copy killed by SIGKILL (a sandbox killed from outside,
// a spawner when its test binary exits) writes nothing, and neither does
// an init confined by Landlock, which allows it no write to the directory.
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
