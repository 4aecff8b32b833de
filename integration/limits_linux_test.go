package integration

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// Each test runs one bounded probe that runs into a limit: under the limit
// it fails with the kernel's own error and the command learns which limit
// it hit; the control runs the same probe with that limit off (NoLimit)
// and it succeeds, which proves the limit, not the probe, stopped it.

// limitRun is how a probe ended and what the sandbox said of it.
type limitRun struct {
	result
	status syscall.WaitStatus
	hits   []corral.Violation
	logs   []string
}

func (r limitRun) hit(target string) bool {
	for _, v := range r.hits {
		if v.Kind == corral.ViolationLimit && v.Target == target {
			return true
		}
	}
	return false
}

// runLimited runs script with sh -c on rung under lim.
func runLimited(t *testing.T, rung corral.Rung, lim corral.Limits, script string) limitRun {
	t.Helper()
	w := newWorld(t)
	// Only the workspace: on the landlock rung a directory holding a
	// read-only or hidden path takes no new entries.
	cfg := corral.Config{Workspace: w.ws, Limits: lim}
	sb, logs := rungSandbox(t, rung, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := sb.Command(ctx, "sh", "-c", script)
	c.Env = w.env()
	r := limitRun{result: collect(t, c.Run, &c.Stdout, &c.Stderr, func() int { return c.ProcessState.ExitCode() })}
	r.status = c.ProcessState.Sys().(syscall.WaitStatus)
	r.hits, r.logs = c.LimitsHit(), *logs
	return r
}

func TestLimitsTmpSize(t *testing.T) {
	// 2 GiB into a 64 MiB /tmp: ENOSPC once 64 MiB are written, at once.
	const write = `head -c 2G /dev/zero > %s/big; echo "rc=$?"; `
	for _, dir := range []string{"/tmp", "/dev/shm"} {
		t.Run(strings.TrimPrefix(dir, "/"), func(t *testing.T) {
			capped := runLimited(t, corral.RungFull, corral.Limits{TmpSize: 64 << 20},
				strings.ReplaceAll(write, "%s", dir)+`du -k `+dir+`/big`)
			assert.Contains(t, capped.stderr, "No space left on device", capped)
			assert.Contains(t, capped.stdout, "rc=1", capped)
			assert.True(t, capped.hit("tmp-size"), "hits: %v", capped.hits)
			assert.Regexp(t, `^rc=1\n6[0-9]{4}\s`, capped.stdout, "64 MiB were written")

			// The control writes twice the cap into an unsized tmpfs.
			free := runLimited(t, corral.RungFull, corral.Limits{TmpSize: corral.NoLimit},
				`head -c 128M /dev/zero > `+dir+`/big; echo "rc=$?"`)
			assert.Equal(t, "rc=0\n", free.stdout, free)
			assert.Empty(t, free.hits)
		})
	}
}

func TestLimitsTmpSizeDefault(t *testing.T) {
	r := runLimited(t, corral.RungFull, corral.Limits{}, `df -k /tmp /dev/shm | tail -n 2`)
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		assert.Equal(t, "1048576", strings.Fields(line)[1], "1 GiB by default: %s", r.stdout)
	}
}

func TestLimitsPids(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("the kernel exempts root from RLIMIT_NPROC: as root the pids limit needs cgroup v2 (TestLimitsCgroupEnforced), and TestLimitsPidsLadder covers its refusal without; the unprivileged pass runs this test")
	}
	// A bounded fork bomb: 200 sleepers, at most, each kept until the
	// command ends (its PID namespace ends them).
	const bomb = `i=0; while [ $i -lt 200 ]; do sleep 60 & i=$((i+1)); done; echo "spawned $i"`
	capped := runLimited(t, corral.RungFull, corral.Limits{Pids: 50}, bomb)
	assert.NotContains(t, capped.stdout, "spawned", capped)
	assert.Contains(t, strings.ToLower(capped.stderr), "fork", capped)
	assert.True(t, capped.hit("pids"), "hits: %v", capped.hits)

	free := runLimited(t, corral.RungFull, corral.Limits{Pids: corral.NoLimit}, bomb)
	assert.Equal(t, "spawned 200\n", free.stdout, free)
	assert.Empty(t, free.hits)
}

// forkProbe forks children that wait until it exits, up to 10, and says
// how many it got: with the probe itself, it holds that many tasks plus
// one at once.
const forkProbe = `
import os
r, w = os.pipe()
n = 0
for _ in range(10):
    try:
        pid = os.fork()
    except OSError as e:
        print("refused", e.strerror)
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    n += 1
print("forked", n)
`

// --pids N counts the command's tasks alone, the command itself among
// them: the init's threads, which share its user, are not taken from it.
// Under 3 and under 5 the probe holds exactly 3 and 5 tasks; without the
// limit it forks all 10.
func TestLimitsPidsExact(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("the kernel exempts root from RLIMIT_NPROC: the unprivileged pass runs this test")
	}
	probe := func(pids int) string {
		w := newWorld(t)
		sb, _ := rungSandbox(t, corral.RungFull, corral.Config{Workspace: w.ws, Limits: corral.Limits{Pids: pids}})
		out, err := sb.Command(context.Background(), "python3", "-c", forkProbe).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	assert.Equal(t, "refused Resource temporarily unavailable\nforked 2\n", probe(3))
	assert.Equal(t, "refused Resource temporarily unavailable\nforked 4\n", probe(5))
	assert.Equal(t, "forked 10\n", probe(corral.NoLimit))
}

func TestLimitsPidsLadder(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.Limits.CPUs = 1.5 // no host without cgroup v2 enforces it
	r, err := corral.Doctor(cfg)
	require.NoError(t, err)
	var cpus corral.LimitStatus
	for _, l := range r.Limits {
		if l.Name == corral.LimitCPUs {
			cpus = l
		}
	}
	if cpus.Available {
		t.Skip("this host enforces --cpus (cgroup v2): nothing to refuse")
	}
	_, err = corral.New(cfg)
	var se *corral.SetupError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, corral.LayerLimits, se.Layer)
	assert.Contains(t, err.Error(), "--cpus 1.5 cannot be enforced: "+cpus.Reason)

	var logs []string
	cfg.Fallback = corral.FallbackWarn
	cfg.Logf = func(format string, args ...any) { logs = append(logs, strings.TrimSpace(format)) }
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	sb.Close()
	assert.Len(t, logs, 1, "one warning")

	// A default the host cannot enforce is no reason to refuse.
	cfg = w.config()
	_, err = corral.New(cfg)
	require.NoError(t, err)
	if os.Geteuid() == 0 {
		cfg.Limits.Pids = 64
		_, err = corral.New(cfg)
		require.ErrorAs(t, err, &se)
		assert.Contains(t, err.Error(), "--pids 64 cannot be enforced: the kernel exempts root from RLIMIT_NPROC")
	}
}

// The rlimits hold on both rungs.
func TestLimitsRlimits(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			t.Run("file-size", func(t *testing.T) { testFileSize(t, rung) })
			t.Run("memory", func(t *testing.T) { testMemory(t, rung) })
			t.Run("open-files", func(t *testing.T) { testOpenFiles(t, rung) })
			t.Run("cpu-time", func(t *testing.T) { testCPUTime(t, rung) })
			t.Run("no raising", func(t *testing.T) { testNoRaising(t, rung) })
		})
	}
}

func testFileSize(t *testing.T, rung corral.Rung) {
	const write = `head -c 4M /dev/zero > "$WS/f"`
	capped := runLimited(t, rung, corral.Limits{FileSize: 1 << 20}, write)
	// sh reports head's death as 128+SIGXFSZ.
	assert.Equal(t, 128+int(syscall.SIGXFSZ), capped.code, capped)
	assert.Contains(t, capped.stderr, "File size limit exceeded")
	assert.True(t, capped.hit("file-size"), "hits: %v", capped.hits)
	free := runLimited(t, rung, corral.Limits{FileSize: corral.NoLimit}, write+` && echo ok`)
	assert.Equal(t, "ok\n", free.stdout, free)
	assert.Empty(t, free.hits)
}

func testMemory(t *testing.T, rung corral.Rung) {
	// tail holds the last 500 MiB of its input in memory; its status is
	// the command's.
	const hog = `head -c 600M /dev/zero | tail -c 500M >/dev/null && echo kept`
	capped := runLimited(t, rung, corral.Limits{Memory: 320 << 20}, hog)
	assert.Contains(t, capped.stderr, "memory exhausted", capped)
	assert.NotContains(t, capped.stdout, "kept", capped)
	assert.True(t, capped.hit("memory"), "hits: %v", capped.hits)
	free := runLimited(t, rung, corral.Limits{Memory: corral.NoLimit}, hog)
	assert.Equal(t, "kept\n", free.stdout, free)
	assert.Empty(t, free.hits)
}

// A memory limit far below what the sandbox's Go init maps holds for the
// command from its first instruction: the init sets it on the command
// alone, at its first exec. The first program already runs under it
// (cat's own /proc/self/limits), a 64 MiB hog fails under 32 MiB while a 1
// MiB one runs, and without the limit the hog gets its memory.
func TestLimitsMemorySmall(t *testing.T) {
	const (
		hog   = `head -c 64M /dev/zero | tail -c 64M >/dev/null && echo kept`
		small = `head -c 1M /dev/zero | tail -c 1M | wc -c`
	)
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			w := newWorld(t)
			sb, _ := rungSandbox(t, rung, corral.Config{Workspace: w.ws, Limits: corral.Limits{Memory: 32 << 20}})
			out, err := sb.Command(context.Background(), "cat", "/proc/self/limits").Output()
			require.NoError(t, err)
			assert.Regexp(t, `Max data size +33554432 +33554432 +bytes`, string(out))

			capped := runLimited(t, rung, corral.Limits{Memory: 32 << 20}, hog)
			assert.Contains(t, capped.stderr, "memory exhausted", capped)
			assert.NotContains(t, capped.stdout, "kept", capped)
			ran := runLimited(t, rung, corral.Limits{Memory: 32 << 20}, small)
			assert.Equal(t, "1048576\n", ran.stdout, ran)
			free := runLimited(t, rung, corral.Limits{Memory: corral.NoLimit}, hog)
			assert.Equal(t, "kept\n", free.stdout, free)
		})
	}
}

// The memory limit and the report share the init's one listener: both
// hold when asked together.
func TestLimitsMemoryWithReport(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			s := newReportScene(t)
			cfg := s.config()
			cfg.Limits = corral.Limits{Memory: 32 << 20}
			sb, _ := rungSandbox(t, rung, cfg)
			target := filepath.Join(s.outside, "f")
			c := sb.Command(context.Background(), "sh", "-c", "echo x > "+target+" 2>/dev/null; head -c 64M /dev/zero | tail -c 64M >/dev/null && echo kept; true")
			out, err := c.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "memory exhausted")
			assert.NotContains(t, string(out), "kept")
			assert.NotNil(t, findViolation(c.Report(), corral.ViolationWrite, target), "%+v", c.Report())
		})
	}
}

func testOpenFiles(t *testing.T, rung corral.Rung) {
	// bash opens descriptors 3 to 100 and keeps them.
	const open = `exec bash -c 'for i in $(seq 3 100); do eval "exec $i</dev/null" || exit 3; done; echo opened'`
	capped := runLimited(t, rung, corral.Limits{OpenFiles: 32}, open)
	assert.Equal(t, 3, capped.code, capped)
	assert.NotContains(t, capped.stdout, "opened", capped)
	free := runLimited(t, rung, corral.Limits{OpenFiles: corral.NoLimit}, open)
	assert.Equal(t, "opened\n", free.stdout, free)
}

func testCPUTime(t *testing.T, rung corral.Rung) {
	// Busy until the shell itself has used 2 s of CPU (field 14 of its
	// stat is its user time in ticks), however loaded the machine.
	const busy = `while [ "$(cut -d' ' -f14 /proc/$$/stat)" -lt 200 ]; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; done; echo survived`
	capped := runLimited(t, rung, corral.Limits{CPUTime: time.Second}, busy)
	assert.True(t, capped.status.Signaled() && capped.status.Signal() == syscall.SIGXCPU, capped)
	assert.True(t, capped.hit("cpu-time"), "hits: %v", capped.hits)
	free := runLimited(t, rung, corral.Limits{CPUTime: corral.NoLimit}, busy)
	assert.Equal(t, "survived\n", free.stdout, free)
	assert.Empty(t, free.hits)
}

// The command may lower its limits and raise the soft one back, never the
// hard one: it has no CAP_SYS_RESOURCE where the kernel asks for it, in
// the host's user namespace.
func testNoRaising(t *testing.T, rung corral.Rung) {
	const raise = `ulimit -S -n 16 && ulimit -S -n 32 && echo soft-raised; ulimit -H -n 200 && echo hard-raised`
	capped := runLimited(t, rung, corral.Limits{OpenFiles: 32}, raise)
	assert.Equal(t, "soft-raised\n", capped.stdout, capped)
	assert.Contains(t, capped.stderr, "not permitted", capped)
	// Without the limit the hard limit is the caller's, above 200: the
	// same probe sets it.
	free := runLimited(t, rung, corral.Limits{OpenFiles: corral.NoLimit}, raise)
	assert.Equal(t, "soft-raised\nhard-raised\n", free.stdout, free)
}

// On the landlock rung there is no private /tmp to size: asking for one
// follows the ladder (rungSandbox runs with FallbackWarn: one warning).
func TestLimitsTmpSizeLandlock(t *testing.T) {
	r := runLimited(t, corral.RungLandlock, corral.Limits{TmpSize: 64 << 20}, `echo ran`)
	assert.Equal(t, "ran\n", r.stdout, r)
	found := false
	for _, l := range r.logs {
		found = found || strings.Contains(l, "--tmp-size 64M (rung landlock has no private /tmp")
	}
	assert.True(t, found, "logs: %q", r.logs)
}

// With a writable cgroup v2 subtree the pids limit holds for the whole
// sandbox, root included, and CPUs can be capped. This host may have none
// (cgroup v1, or cgroup2 without the controllers): the test then skips
// with the doctor's reason, and the cgroup files are tested against a
// directory laid out like cgroupfs (package limits, nsjail).
func TestLimitsCgroupEnforced(t *testing.T) {
	r, err := corral.Doctor(corral.Config{Limits: corral.Limits{CPUs: 1}})
	require.NoError(t, err)
	for _, l := range r.Limits {
		if l.Name == corral.LimitCPUs && !l.Available {
			t.Skip("no cgroup v2 subtree to enforce limits in: " + l.Reason)
		}
	}
	const bomb = `i=0; while [ $i -lt 200 ]; do sleep 60 & i=$((i+1)); done; echo "spawned $i"`
	capped := runLimited(t, corral.RungFull, corral.Limits{Pids: 50, CPUs: 0.5}, bomb)
	assert.NotContains(t, capped.stdout, "spawned", capped)
	assert.True(t, capped.hit("pids"), "hits: %v", capped.hits)
	free := runLimited(t, corral.RungFull, corral.Limits{Pids: corral.NoLimit, CPUs: 0.5}, bomb)
	assert.Equal(t, "spawned 200\n", free.stdout, free)
}

// inotifyProbe takes inotify instances until refused, at most 40, says how
// many it got, and holds them until its stdin closes.
const inotifyProbe = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 40:
    if libc.inotify_init1(0o2000000) < 0:
        print("refused", os.strerror(ctypes.get_errno()), flush=True)
        break
    n += 1
print("took", n, flush=True)
sys.stdin.read()
`

// A user's inotify instances are counted across user namespaces: each
// sandbox's command has a budget of its own (the mount watch's instance,
// taken before the command runs, among it), so a command that takes all
// it can leaves the next sandbox, whose mount watch needs one, its start.
// The same probe on the host takes all 40: the budget, not the host's
// limit, refuses it in the sandbox.
func TestLimitsInotifyBudget(t *testing.T) {
	w := newWorld(t)
	sb, _ := rungSandbox(t, corral.RungFull, corral.Config{Workspace: w.ws})
	hog := sb.Command(context.Background(), "python3", "-c", inotifyProbe)
	stdin, err := hog.StdinPipe()
	require.NoError(t, err)
	stdout, err := hog.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, hog.Start())
	defer func() { stdin.Close(); hog.Wait() }()
	lines := bufio.NewScanner(stdout)
	var said []string
	for lines.Scan() {
		said = append(said, lines.Text())
		if strings.HasPrefix(lines.Text(), "took") {
			break
		}
	}
	assert.Equal(t, []string{"refused Too many open files", "took 15"}, said)

	// Another sandbox with binds to guard starts and runs while the first
	// holds its whole budget.
	w2 := newWorld(t)
	sb2, _ := rungSandbox(t, corral.RungFull, corral.Config{Workspace: w2.ws})
	out, err := sb2.Command(context.Background(), "echo", "started").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "started\n", string(out))

	host := exec.Command("python3", "-c", inotifyProbe)
	host.Stdin = strings.NewReader("")
	out, err = host.Output()
	require.NoError(t, err)
	assert.Equal(t, "took 40\n", string(out))
}

// sharedMemoryProbe holds 520 MiB of shared memory, made the way named by
// its argument, each page touched, and says so.
const sharedMemoryProbe = `
import mmap, os, sys
n = 520 << 20
try:
    if sys.argv[1] == "mmap":
        m = mmap.mmap(-1, n)
    elif sys.argv[1] == "memfd":
        fd = os.memfd_create("probe")
        os.ftruncate(fd, n)
        m = mmap.mmap(fd, n)
    else:
        m = mmap.mmap(os.open("/dev/zero", os.O_RDWR), n)
    for i in range(0, n, 4096):
        m[i] = 1
except OSError as e:
    print("refused", e.strerror)
    sys.exit(1)
shmem = [l.split()[1] for l in open("/proc/self/status") if l.startswith("RssShmem")][0]
print("held", int(shmem) >> 10, "MiB")
`

// RLIMIT_DATA counts no shared memory: under a memory limit that no cgroup
// counts it for, what makes shared anonymous memory is refused (a shared
// anonymous mapping, a memfd, a writable shared mapping of /dev/zero),
// and without the limit each probe holds its 520 MiB.
func TestLimitsMemoryShared(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			w := newWorld(t)
			probe := func(memory int64, how string) string {
				sb, _ := rungSandbox(t, rung, corral.Config{Workspace: w.ws, Limits: corral.Limits{Memory: memory}})
				out, _ := sb.Command(context.Background(), "python3", "-c", sharedMemoryProbe, how).CombinedOutput()
				return string(out)
			}
			for how, refusal := range map[string]string{
				"mmap":  "refused Cannot allocate memory\n",
				"memfd": "refused Cannot allocate memory\n",
				"zero":  "refused Permission denied\n",
			} {
				assert.Equal(t, refusal, probe(64<<20, how), how)
				assert.Equal(t, "held 520 MiB\n", probe(corral.NoLimit, how), how)
			}
		})
	}
}
