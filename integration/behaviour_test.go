//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// These tests check that the sandbox still lets ordinary work happen: the
// attack tests alone would pass for a sandbox that runs nothing.

func newSandbox(t *testing.T, cfg corral.Config) *corral.Sandbox {
	t.Helper()
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return sb
}

func TestWorkspaceWritesReachTheHost(t *testing.T) {
	w := newWorld(t)
	r := w.sandboxed(w.config(), `echo made > "$WS/out.txt" && mkdir -p "$WS/sub/dir" && cat /etc/hostname >/dev/null && echo ok`)
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, "ok\n", r.stdout)
	assert.True(t, fileHas(filepath.Join(w.ws, "out.txt"), "made"))
	assert.DirExists(t, filepath.Join(w.ws, "sub/dir"))
}

func TestWritablePathsAndPrivateTmp(t *testing.T) {
	w := newWorld(t)
	extra := realDir(t)
	cfg := w.config()
	cfg.WritablePaths = []string{extra}
	r := w.sandboxed(cfg, `echo x > "`+extra+`/f" && echo y > /tmp/scratch && cat /tmp/scratch && ls /tmp | wc -l`)
	require.Equal(t, 0, r.code, r.String())
	assert.True(t, fileHas(filepath.Join(extra, "f"), "x"))
	assert.Contains(t, r.stdout, "y\n")
}

func TestWritablePathUnderReadOnlyPath(t *testing.T) {
	w := newWorld(t)
	out := filepath.Join(w.data, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	cfg := w.config()
	cfg.WritablePaths = []string{out}
	r := w.sandboxed(cfg, `echo x > "$DATA/out/f" && ! echo y > "$DATA/g"`)
	require.Equal(t, 0, r.code, r.String())
	assert.FileExists(t, filepath.Join(out, "f"))
	assert.NoFileExists(t, filepath.Join(w.data, "g"))
}

func TestIdentityAndPrivileges(t *testing.T) {
	w := newWorld(t)
	r := w.sandboxed(w.config(), `id -u; id -g; grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status; echo $$`)
	require.Equal(t, 0, r.code, r.String())
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 9, r.String())
	assert.Equal(t, itoa(os.Getuid()), lines[0], "the command sees the caller's uid")
	assert.Equal(t, itoa(os.Getgid()), lines[1], "the command sees the caller's gid")
	for _, l := range lines[2:7] {
		assert.True(t, strings.HasSuffix(l, "0000000000000000"), "no capabilities: %s", l)
	}
	assert.Equal(t, "NoNewPrivs:\t1", lines[7])
}

func TestDefaultEnvironmentDropsSecrets(t *testing.T) {
	t.Setenv("CORRAL_TEST_API_KEY", "sk-should-not-pass")
	t.Setenv("GITHUB_TOKEN", "ghp-should-not-pass")
	t.Setenv("LC_CORRAL", "kept")
	t.Setenv("UNLISTED_VAR", "dropped")
	w := newWorld(t)
	sb := newSandbox(t, corral.Config{Workspace: w.ws, Env: []string{"EXPLICIT=yes", "LC_CORRAL"}})
	c := sb.Command(context.Background(), "sh", "-c", `env; cat /proc/self/environ /proc/1/environ | tr '\0' '\n'`)
	out, err := c.Output()
	require.NoError(t, err)
	s := string(out)
	assert.NotContains(t, s, "should-not-pass")
	assert.NotContains(t, s, "UNLISTED_VAR")
	assert.Contains(t, s, "PATH=")
	assert.Contains(t, s, "LC_CORRAL=kept")
	assert.Contains(t, s, "EXPLICIT=yes")
}

func TestSecretInCallerEnvironmentIsVisibleWithoutSandbox(t *testing.T) {
	// The control for TestDefaultEnvironmentDropsSecrets: a plain child sees it.
	t.Setenv("CORRAL_TEST_API_KEY", "sk-should-not-pass")
	out, err := exec.Command("sh", "-c", "env").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "should-not-pass")
}

func TestStdioAndExitStatus(t *testing.T) {
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	c := sb.Command(context.Background(), "sh", "-c", "tr a-z A-Z; echo err >&2; exit 3")
	c.Stdin = strings.NewReader("hello\n")
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	var ee *corral.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.ExitCode())
	assert.Equal(t, "HELLO\n", stdout.String())
	assert.Equal(t, "err\n", stderr.String())
	assert.Equal(t, "exit status 3", c.ProcessState.String())

	out, err := sb.Command(context.Background(), "sh", "-c", "echo out; echo err >&2").CombinedOutput()
	require.NoError(t, err)
	assert.Equal(t, "out\nerr\n", string(out))
}

func TestWorkingDirectory(t *testing.T) {
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	out, err := sb.Command(context.Background(), "pwd").Output()
	require.NoError(t, err)
	assert.Equal(t, w.ws+"\n", string(out), "defaults to the workspace")

	c := sb.Command(context.Background(), "pwd")
	c.Dir = "data"
	out, err = c.Output()
	require.NoError(t, err)
	assert.Equal(t, w.data+"\n", string(out), "relative to the workspace")

	c = sb.Command(context.Background(), "pwd")
	c.Dir = "/no/such/dir"
	var se *corral.SetupError
	require.ErrorAs(t, c.Run(), &se)
	assert.Equal(t, "/no/such/dir", se.Path)
}

func TestStartErrors(t *testing.T) {
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	err := sb.Command(context.Background(), "no-such-command-xyz").Run()
	assert.ErrorIs(t, err, corral.ErrNotFound)
	err = sb.Command(context.Background(), "/etc/hostname").Run()
	assert.ErrorIs(t, err, corral.ErrNotExecutable)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "noexec.sh"), []byte("#!/bin/sh\n"), 0o644))
	err = sb.Command(context.Background(), "./noexec.sh").Run()
	assert.ErrorIs(t, err, corral.ErrNotExecutable)
}

func TestContextCancelKillsTheSandbox(t *testing.T) {
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := sb.Command(ctx, "sleep", "60").Run()
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestSignalsReachTheCommand(t *testing.T) {
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	c := sb.Command(context.Background(), "sh", "-c", `trap 'echo got-term; exit 0' TERM; echo ready; while :; do sleep 0.05; done`)
	stdout, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line, "the trap is set")
	require.NoError(t, c.Process.Signal(syscall.SIGTERM))
	rest, err := io.ReadAll(out)
	require.NoError(t, err)
	require.NoError(t, c.Wait())
	assert.Equal(t, "got-term\n", string(rest))

	c = sb.Command(context.Background(), "sleep", "60")
	require.NoError(t, c.Start())
	require.NoError(t, c.Process.Kill())
	err = c.Wait()
	var ee *corral.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "signal: killed", ee.String())
}

func TestNetworkNone(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.Network = corral.NetworkNone
	r := w.sandboxed(cfg, `cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '`)
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, "lo\n", r.stdout, "only loopback")

	// Loopback is up: a server and its client inside the sandbox talk.
	r = w.sandboxed(cfg, `perl -MIO::Socket::INET -e '
		my $l = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1:0") or die "listen: $!\n";
		IO::Socket::INET->new(PeerAddr => "127.0.0.1:" . $l->sockport) or die "connect: $!\n";
		print "connected\n"'`)
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, "connected\n", r.stdout)
}

func TestConfigErrors(t *testing.T) {
	w := newWorld(t)
	file := filepath.Join(w.ws, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		name string
		cfg  corral.Config
		want string
	}{
		{"no workspace", corral.Config{}, "Workspace: required"},
		{"missing workspace", corral.Config{Workspace: "/no/such/ws"}, "/no/such/ws: does not exist"},
		{"file as workspace", corral.Config{Workspace: file}, "not a directory"},
		{"missing read-only path", corral.Config{Workspace: w.ws, ReadOnlyPaths: []string{"/no/such/ro"}}, "ReadOnlyPaths: /no/such/ro"},
		{"missing writable path", corral.Config{Workspace: w.ws, WritablePaths: []string{"/no/such/rw"}}, "WritablePaths: /no/such/rw"},
		{"bad mode", corral.Config{Workspace: w.ws, Mode: "sometimes"}, `Mode: sometimes`},
		{"bad network", corral.Config{Workspace: w.ws, Network: "wifi"}, `Network: wifi`},
		{"workspace inside hidden", corral.Config{Workspace: w.ws, HiddenPaths: []string{filepath.Dir(w.ws)}}, "contains"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := corral.New(tc.cfg)
			var ce *corral.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestManySandboxesInParallel(t *testing.T) {
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			out, err := sb.Command(context.Background(), "sh", "-c", "echo $0", itoa(i)).Output()
			if err == nil && string(out) != itoa(i)+"\n" {
				err = errors.New("wrong output " + string(out))
			}
			errs <- err
		}()
	}
	for range 16 {
		assert.NoError(t, <-errs)
	}
}

// PID 1 of the sandbox is corral's init, and it reaps the orphans the
// command leaves while the command still runs.
func TestInitReapsOrphans(t *testing.T) {
	w := newWorld(t)
	// The orphans have exited once the pipe to cat closes. Nothing inside
	// tells when their parent, the init, has reaped them: the script looks
	// until no zombie is left, for ten seconds at most.
	r := w.sandboxed(w.config(), `for i in 1 2 3; do (true &); done | cat
		zombies() { for s in /proc/[0-9]*/stat; do cut -d' ' -f3 "$s"; done 2>/dev/null | grep -c Z; }
		i=0; while [ "$(zombies)" != 0 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
		tr '\0' ' ' < /proc/1/cmdline; echo
		zombies`)
	require.Equal(t, 1, r.code, "grep -c finds no zombie: %s", r)
	assert.Contains(t, r.stdout, "__sandbox-init \n0\n")
}

// The sandbox's description reaches its init on an inherited socket, never
// in its command line or environment, where the command (or anything else
// on the host that reads /proc) could see it.
func TestSpecStaysOutOfArgvAndEnv(t *testing.T) {
	w := newWorld(t)
	marker := "corral-spec-marker-" + itoa(os.Getpid())
	hidden := filepath.Join(w.ws, marker)
	require.NoError(t, os.Mkdir(hidden, 0o700))
	cfg := w.config()
	cfg.HiddenPaths = append(cfg.HiddenPaths, hidden)
	cfg.Env = []string{"MARKER=" + marker}
	sb := newSandbox(t, cfg)
	c := sb.Command(context.Background(), "sh", "-c", `cat /proc/1/cmdline /proc/1/environ 2>/dev/null; echo "$MARKER" | wc -l; sleep 30`)
	stdout, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	defer c.Process.Kill()
	// cat prints no newline of its own: the first is wc's, after it.
	out, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(out, "1\n"), "%q", out)
	assert.NotContains(t, out, marker, "inside: the init's argv and environment")

	// From the host: the init is the command's Process.
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile(filepath.Join("/proc", itoa(c.Process.Pid), f))
		if err == nil {
			assert.NotContains(t, string(b), marker, "outside: /proc/<init>/%s", f)
		}
	}
	b, err := os.ReadFile(filepath.Join("/proc", itoa(c.Process.Pid), "cmdline"))
	require.NoError(t, err)
	assert.Equal(t, []string{"__sandbox-init"}, strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")[1:])
}

// Mode disabled runs commands with the caller's full access, and says so
// once, when the Sandbox is made, not per command.
func TestDisabledModeSaysSoOnce(t *testing.T) {
	w := newWorld(t)
	var logs []string
	sb := newSandbox(t, corral.Config{Mode: corral.ModeDisabled, Workspace: w.ws,
		Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }})
	target := filepath.Join(w.outside, "unsandboxed")
	for range 2 {
		out, err := sb.Command(context.Background(), "sh", "-c", `echo x > "$1"`, "sh", target).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	assert.FileExists(t, target, "nothing contains the command")
	require.Len(t, logs, 1)
	assert.Equal(t, "corral: sandbox disabled: commands run with full host access", logs[0])
}

// The command leads a session of its own, so the caller's terminal is not
// its controlling terminal (no TIOCSTI into the caller's shell, no SIGHUP
// from it).
func TestCommandLeadsANewSession(t *testing.T) {
	const script = `read -r stat < /proc/self/stat; set -- ${stat##*) }; [ "$4" = "$$" ] && echo leader || echo member`
	w := newWorld(t)
	require.Equal(t, "member\n", w.bare(script).stdout, "the probe must tell a plain child from a session leader")
	r := w.sandboxed(w.config(), script)
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, "leader\n", r.stdout)
}

// idleInits counts the sandbox inits that are grandchildren of this test
// process (children of its spawner): sandboxes built ahead and waiting.
func idleInits(t *testing.T) int { return len(idleInitPids(t)) }

func idleInitPids(t *testing.T) []int { return initPids(t, true) }

// initPids lists the sandbox inits this test process started: through its
// spawner, or cloned directly (DirectSpawn).
func initPids(t *testing.T, viaSpawner bool) []int {
	t.Helper()
	me := os.Getpid()
	parent := func(pid string) int {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return -1
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		ppid, _ := strconv.Atoi(fields[1])
		return ppid
	}
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), "__sandbox-init") {
			continue
		}
		ppid := parent(e.Name())
		if !viaSpawner && ppid == me || viaSpawner && ppid > 0 && parent(strconv.Itoa(ppid)) == me {
			pid, _ := strconv.Atoi(e.Name())
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestSandboxesBuiltAhead(t *testing.T) {
	w := newWorld(t)
	waitExited(t, idleInitPids(t)...) // sandboxes of earlier tests, closed as they ended

	cfg := w.config()
	cfg.Ahead = 3
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	require.NoError(t, sb.Warm(context.Background()))
	assert.Equal(t, 3, idleInits(t))
	c := sb.Command(context.Background(), "true")
	require.NoError(t, c.Run())
	// The init that ran the command reports before its namespaces (and the
	// staged mounts in them) are torn down: it may linger a moment.
	waitExited(t, c.Process.Pid)
	require.NoError(t, sb.Warm(context.Background()))
	assert.Equal(t, 3, idleInits(t), "the one taken is replaced")
	idle := idleInitPids(t)
	require.NoError(t, sb.Close())
	waitExited(t, idle...)
	assert.Equal(t, 0, idleInits(t), "Close ends them, and nothing replaces them")

	cfg.Ahead = -1
	sb = newSandbox(t, cfg)
	require.NoError(t, sb.Warm(context.Background()))
	assert.Equal(t, 0, idleInits(t))
	require.NoError(t, sb.Command(context.Background(), "true").Run(), "builds one when asked")
}

// A direct caller is short-lived: New builds its first sandbox ahead, so
// that the init starts up while the caller prepares the command, and no
// more.
func TestDirectSpawnBuildsOnlyTheFirstAhead(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.DirectSpawn = true
	sandboxtest.Require(t, cfg)
	sb := newSandbox(t, cfg)
	require.NoError(t, sb.Warm(context.Background()))
	built := initPids(t, false)
	require.Len(t, built, 1)
	c := sb.Command(context.Background(), "true")
	require.NoError(t, c.Run())
	assert.Equal(t, built[0], c.Process.Pid, "the command ran in the sandbox built ahead")
	require.NoError(t, sb.Warm(context.Background()))
	// The init that ran it may linger while its namespaces are torn down.
	waitExited(t, c.Process.Pid)
	assert.Empty(t, initPids(t, false), "nothing replaces it")
	c = sb.Command(context.Background(), "true")
	require.NoError(t, c.Run(), "builds one when asked")
	waitExited(t, c.Process.Pid)
	assert.Empty(t, initPids(t, false))

	sb, err := corral.New(cfg)
	require.NoError(t, err)
	require.NoError(t, sb.Warm(context.Background()))
	built = initPids(t, false)
	require.Len(t, built, 1)
	require.NoError(t, sb.Close())
	waitExited(t, built...)
	assert.Empty(t, initPids(t, false), "Close ends the one never taken")

	cfg.Ahead = -1
	sb = newSandbox(t, cfg)
	require.NoError(t, sb.Warm(context.Background()))
	assert.Empty(t, initPids(t, false))
}

func TestReadySandboxKilledWhileWaitingIsReplaced(t *testing.T) {
	w := newWorld(t)
	waitExited(t, idleInitPids(t)...) // sandboxes of earlier tests, closed as they ended
	cfg := w.config()
	cfg.Ahead = 1
	sb := newSandbox(t, cfg)
	require.NoError(t, sb.Warm(context.Background()))
	pids := idleInitPids(t)
	require.Len(t, pids, 1)
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))
	out, err := sb.Command(context.Background(), "echo", "fresh").Output()
	require.NoError(t, err)
	assert.Equal(t, "fresh\n", string(out))
}

// A relative PATH entry is searched from the command's working directory,
// as a shell there would search it.
func TestRelativePathEntry(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.Mkdir(filepath.Join(w.ws, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "bin", "hello-tool"), []byte("#!/bin/sh\necho hello from $0\n"), 0o755))
	sb := newSandbox(t, w.config())
	c := sb.Command(context.Background(), "hello-tool")
	c.Env = []string{"PATH=bin:/usr/bin:/bin"}
	out, err := c.Output()
	require.NoError(t, err)
	assert.Equal(t, "hello from "+filepath.Join(w.ws, "bin", "hello-tool")+"\n", string(out))
}
