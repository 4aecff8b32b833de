//go:build soak

// Package soak runs `make soak`: SOAK_N commands back to back and 8 at a
// time, from the library and from the CLI, on the full rung and on the
// landlock rung, a mix of success, failure, timeout, cancellation, a
// SIGKILLed command, large output and a command that leaves daemons
// behind; then it checks that nothing is left over. It is behind the
// soak build tag: `make test` does not run it.
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/cli"
	"github.com/corralhq/corral/internal/testhook"
)

// roleEnv makes the re-executed test binary the corral CLI, on the rung
// CORRAL_SOAK_RUNG names: the CLI's own code (internal/cli), with the
// user namespace switched off for the landlock rung, which only the
// module's tests can do.
const roleEnv = "CORRAL_SOAK_ROLE"

func TestMain(m *testing.M) {
	if corral.Init() {
		return
	}
	if os.Getenv(roleEnv) == "cli" {
		if os.Getenv("CORRAL_SOAK_RUNG") == "landlock" {
			testhook.Disable(corral.LayerUserNS)
		}
		os.Exit(cli.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// The kinds of command, in the order the soak cycles through them.
const (
	kindSuccess = iota
	kindFailure
	kindTimeout
	kindCancel
	kindKilled
	kindLarge
	kindDaemons
	kinds
)

// largeOutput is what the large-output command writes.
const largeOutput = 4 << 20

// script is the shell script of a command of kind; marker tags the
// daemons so that they can be found wherever they end up.
func script(kind int, marker string) string {
	switch kind {
	case kindSuccess:
		return "echo ok"
	case kindFailure:
		return "echo failing >&2; exit 3"
	case kindTimeout, kindCancel:
		return "sleep " + marker
	case kindKilled:
		return "kill -KILL $$"
	case kindLarge:
		return fmt.Sprintf("head -c %d /dev/zero", largeOutput)
	case kindDaemons:
		return "(sleep " + marker + " &) ; setsid sleep " + marker + " & nohup sleep " + marker + " >/dev/null 2>&1 & echo started"
	}
	panic("no such kind")
}

// checkOutcome says what is wrong with a command of kind that ended with
// err, having written n bytes, or "".
func checkOutcome(kind int, err error, n int64, exit func(error) (int, bool)) string {
	code, exited := exit(err)
	switch kind {
	case kindSuccess, kindDaemons:
		if err != nil {
			return fmt.Sprintf("failed: %v", err)
		}
	case kindFailure:
		if !exited || code != 3 {
			return fmt.Sprintf("want exit 3, got %v", err)
		}
	case kindTimeout, kindCancel:
		if err == nil {
			return "ended without error"
		}
	case kindKilled:
		if err == nil {
			return "a SIGKILLed command succeeded"
		}
	case kindLarge:
		if err != nil || n != largeOutput {
			return fmt.Sprintf("wrote %d bytes, err %v", n, err)
		}
	}
	return ""
}

type counter struct {
	mu sync.Mutex
	n  int64
}

func (c *counter) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.n += int64(len(b))
	c.mu.Unlock()
	return len(b), nil
}

// soak is one run: the test, its marker, the rung and the samples of the
// caller's RSS.
type soak struct {
	t      *testing.T
	marker string
	rung   string
	ws     string
	mu     sync.Mutex
	rss    []int64
	bad    []string
}

func (s *soak) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bad) < 20 {
		s.bad = append(s.bad, fmt.Sprintf(format, args...))
	}
}

// library runs command i on sb.
func (s *soak) library(sb *corral.Sandbox, i int) {
	kind := i % kinds
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if kind == kindTimeout {
		ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
	}
	var out counter
	cmd := sb.Command(ctx, "sh", "-c", script(kind, s.marker))
	cmd.Stdout, cmd.Stderr = &out, io.Discard
	var err error
	if err = cmd.Start(); err == nil {
		if kind == kindCancel {
			cancel()
		}
		err = cmd.Wait()
	}
	exit := func(err error) (int, bool) {
		var ee *corral.ExitError
		if errors.As(err, &ee) && ee.Exited() {
			return ee.ExitCode(), true
		}
		return 0, false
	}
	if why := checkOutcome(kind, err, out.n, exit); why != "" {
		s.fail("library command %d (kind %d): %s", i, kind, why)
	}
}

// cliRun runs command i through the CLI.
func (s *soak) cliRun(self string, i int) {
	kind := i % kinds
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	args := []string{"run", "--workspace", s.ws}
	if s.rung == "landlock" {
		args = append(args, "--fallback", "warn")
	}
	if kind == kindTimeout {
		args = append(args, "--timeout", "50ms")
	}
	args = append(args, "--", "sh", "-c", script(kind, s.marker))
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(os.Environ(), roleEnv+"=cli", "CORRAL_SOAK_RUNG="+s.rung)
	var out counter
	cmd.Stdout, cmd.Stderr = &out, io.Discard
	var err error
	if err = cmd.Start(); err == nil {
		if kind == kindCancel {
			cancel() // the CLI itself is SIGKILLed: its sandbox must go with it
		}
		err = cmd.Wait()
	}
	exit := func(err error) (int, bool) {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Exited() {
			return ee.ExitCode(), true
		}
		return 0, false
	}
	if why := checkOutcome(kind, err, out.n, exit); why != "" {
		s.fail("CLI command %d (kind %d): %s", i, kind, why)
	}
}

// run runs n commands with run, back to back or width at a time.
func run(n, width int, one func(i int)) {
	sem := make(chan struct{}, width)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			one(i)
		}()
	}
	wg.Wait()
}

func soakN(t *testing.T) int {
	n := 1000
	if v := os.Getenv("SOAK_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < kinds {
			t.Fatalf("SOAK_N=%q: want a number of commands, at least %d", v, kinds)
		}
	}
	return n
}

func TestSoak(t *testing.T) {
	n := soakN(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A temporary directory of the soak's own, so that the staging
	// check sees its sandboxes' directories and no one else's.
	tmp, err := os.MkdirTemp("", "corral-soak")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)
	for _, rung := range []string{"full", "landlock"} {
		t.Run(rung, func(t *testing.T) {
			s := &soak{t: t, rung: rung, marker: fmt.Sprintf("1000.%d%d", os.Getpid(), time.Now().UnixNano()%1e6), ws: t.TempDir()}
			cfg := corral.Config{Workspace: s.ws, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}}
			if rung == "landlock" {
				defer testhook.Disable(corral.LayerUserNS)()
				// Without a user namespace the full rung is out of
				// reach: the config must accept the next one down.
				cfg.Fallback = corral.FallbackWarn
				cfg.Logf = func(string, ...any) {}
			}
			// A first sandbox starts what lives as long as the caller
			// (the spawner, its socket and goroutines): the state the
			// soak must leave is the one after it.
			first, err := corral.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s.checkRung(first)
			first.Close()
			before := settle(t, state{fds: 1 << 30, goroutines: 1 << 30, descendants: everything, inits: everything})
			sb, err := corral.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cliN := max(n/4, kinds)
			start := time.Now()
			run(n, 1, func(i int) { s.library(sb, i); s.sampleRSS() })
			run(n, 8, func(i int) { s.library(sb, i) })
			run(cliN, 1, func(i int) { s.cliRun(self, i) })
			run(cliN, 8, func(i int) { s.cliRun(self, i) })
			// A CLI killed by SIGKILL takes its init with it, and leaves
			// the landlock rung's temp dir to the next corral process's
			// sweep: one more command runs before the check.
			s.cliRun(self, kindSuccess)
			if err := sb.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			fmt.Printf("soak %s: %d library commands back to back and %d 8 at a time, %d and %d through the CLI, in %s\n",
				rung, n, n, cliN, cliN, time.Since(start).Round(time.Second))
			for _, b := range s.bad {
				t.Error(b)
			}
			s.check(before)
		})
	}
}

// checkRung makes sure the sandbox is on the rung asked for: on the full
// rung the command has a PID namespace of its own, on the landlock rung
// the caller's.
func (s *soak) checkRung(sb *corral.Sandbox) {
	out, err := sb.Command(context.Background(), "readlink", "/proc/self/ns/pid").Output()
	if err != nil {
		s.t.Fatalf("rung %s: %v", s.rung, err)
	}
	own, _ := os.Readlink("/proc/self/ns/pid")
	private := strings.TrimSpace(string(out)) != own
	if private != (s.rung == "full") {
		s.t.Fatalf("rung %s: the command's PID namespace is %s, the caller's %s", s.rung, out, own)
	}
	fmt.Printf("soak %s: rung: the command's PID namespace private: %v\n", s.rung, private)
}

func (s *soak) sampleRSS() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rss = append(s.rss, rssKiB())
}

// line prints one check's result and fails the test when it is bad.
func (s *soak) line(check string, ok bool, format string, args ...any) {
	verdict := "ok"
	if !ok {
		verdict = "FAIL"
		s.t.Errorf("%s: %s", check, fmt.Sprintf(format, args...))
	}
	fmt.Printf("soak %s: %-12s %-4s %s\n", s.rung, check+":", verdict, fmt.Sprintf(format, args...))
}

// check compares what is left with what was there before.
func (s *soak) check(before state) {
	after := settle(s.t, before)
	left := without(after.descendants, before.descendants)
	s.line("processes", len(left) == 0, "new descendants of the caller: %v (the spawner, there before: %v)", left, before.descendants)
	daemons := processesWith(s.marker)
	s.line("daemons", len(daemons) == 0, "the commands' daemons still running: %v", daemons)
	inits := without(after.inits, before.inits)
	s.line("inits", len(inits) == 0, "sandbox inits left: %v", inits)
	s.line("zombies", len(after.zombies) == 0, "zombies: %v", after.zombies)
	s.line("mounts", after.mounts == before.mounts, "%d mounts before, %d after", before.mounts, after.mounts)
	s.line("tmpfs", after.tmpfs == before.tmpfs, "%d tmpfs before, %d after", before.tmpfs, after.tmpfs)
	extra := without(after.staging, before.staging)
	s.line("staging", len(extra) == 0, "corral-* directories left in %s: %v", os.TempDir(), extra)
	s.line("held files", after.locks == before.locks, "%d file locks of the caller before, %d after", before.locks, after.locks)
	s.line("descriptors", after.fds == before.fds, "%d open before, %d after", before.fds, after.fds)
	s.line("goroutines", after.goroutines <= before.goroutines, "%d before, %d after", before.goroutines, after.goroutines)
	s.checkRSS()
}

// checkRSS: after a warm-up of 100 commands, the mean RSS of the last 100
// back-to-back library commands is within 10% of the first 100's.
func (s *soak) checkRSS() {
	if len(s.rss) < 300 {
		fmt.Printf("soak %s: %-12s skip %d back-to-back commands: too few to judge (300 needed)\n", s.rung, "rss:", len(s.rss))
		return
	}
	mean := func(xs []int64) float64 {
		var sum int64
		for _, x := range xs {
			sum += x
		}
		return float64(sum) / float64(len(xs))
	}
	first, last := mean(s.rss[100:200]), mean(s.rss[len(s.rss)-100:])
	s.line("rss", last <= first*1.1 && last >= first*0.9, "first 100 after warm-up %.0f KiB, last 100 %.0f KiB (%+.1f%%)", first, last, 100*(last-first)/first)
}

// state is what the soak must leave as it found.
type state struct {
	descendants, inits, zombies []string
	mounts, tmpfs, locks, fds   int
	goroutines                  int
	staging                     []string
}

func takeState(t *testing.T) state {
	var st state
	me := os.Getpid()
	self, _ := os.Executable()
	procs := processes()
	for pid, p := range procs {
		if pid == me {
			continue
		}
		desc := isDescendant(procs, pid, me)
		if desc {
			st.descendants = append(st.descendants, p.String())
		}
		if p.state == "Z" && (desc || p.ppid == me) {
			st.zombies = append(st.zombies, p.String())
		}
		// Another program's sandboxes are not this one's: an init or
		// spawner of the soak's runs this very binary.
		if exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); exe == self && strings.Contains(p.cmdline, "__sandbox") {
			st.inits = append(st.inits, p.String())
		}
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(strings.TrimSpace(string(mi)), "\n") {
		st.mounts++
		if _, fs, ok := strings.Cut(l, " - "); ok && strings.HasPrefix(fs, "tmpfs ") {
			st.tmpfs++
		}
	}
	locks, _ := os.ReadFile("/proc/locks")
	for l := range strings.SplitSeq(string(locks), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == strconv.Itoa(me) {
			st.locks++
		}
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	st.fds = len(fds)
	st.goroutines = runtime.NumGoroutine()
	st.staging, _ = filepath.Glob(filepath.Join(os.TempDir(), "corral-*"))
	return st
}

// settle takes the state until what closing released is gone: a
// goroutine or an init may take a moment to end after Close returns. It
// gives up after a while and returns what it saw last.
func settle(t *testing.T, before state) state {
	var st state
	for range 100 {
		runtime.GC()
		st = takeState(t)
		if len(without(st.descendants, before.descendants))+len(without(st.inits, before.inits))+len(st.zombies) == 0 &&
			st.fds <= before.fds && st.goroutines <= before.goroutines {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return st
}

type proc struct {
	pid, ppid int
	state     string
	cmdline   string
}

func (p proc) String() string { return fmt.Sprintf("%d(%s %q)", p.pid, p.state, p.cmdline) }

func processes() map[int]proc {
	out := map[int]proc{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out[pid] = proc{pid: pid, ppid: ppid, state: f[0], cmdline: strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))}
	}
	return out
}

func isDescendant(procs map[int]proc, pid, of int) bool {
	for range 64 {
		p, ok := procs[pid]
		if !ok || p.ppid == 0 {
			return false
		}
		if p.ppid == of {
			return true
		}
		pid = p.ppid
	}
	return false
}

// processesWith lists the processes whose command line holds marker.
func processesWith(marker string) []string {
	var out []string
	for _, p := range processes() {
		if strings.Contains(p.cmdline, marker) {
			out = append(out, p.String())
		}
	}
	slices.Sort(out)
	return out
}

// everything stands, in a state settle waits for, for any list.
var everything = []string{"*"}

func without(xs, ys []string) []string {
	if slices.Equal(ys, everything) {
		return nil
	}
	var out []string
	for _, x := range xs {
		if !slices.Contains(ys, x) {
			out = append(out, x)
		}
	}
	return out
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
