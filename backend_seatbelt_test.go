//go:build unix

package corral

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/internal/sbplcheck"
	"github.com/corralhq/corral/seatbelt"
)

// The seatbelt backend cannot apply a profile off macOS, but everything
// around sandbox-exec can run here: a stand-in runner records its arguments
// and executes what follows "--", as sandbox-exec does once the profile is
// applied.
const standInRunner = `#!/bin/sh
printf '%s\0' "$@" > "$(dirname "$0")/args"
while [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done
shift
exec "$@"
`

// rejectingRunner fails as sandbox-exec does when it cannot apply a profile.
const rejectingRunner = `#!/bin/sh
echo "sandbox-exec: unbound variable: frobnicate" >&2
exit 65
`

type seatbeltFixture struct {
	sb        *Sandbox
	workspace string
	runnerDir string
}

func newSeatbeltFixture(t *testing.T, script string, cfg Config) *seatbeltFixture {
	t.Helper()
	f := &seatbeltFixture{runnerDir: t.TempDir()}
	runner := filepath.Join(f.runnerDir, "sandbox-exec")
	require.NoError(t, os.WriteFile(runner, []byte(script), 0o755))
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	s, err := cfg.resolve()
	require.NoError(t, err)
	f.workspace = s.Workspace
	b, err := newSeatbeltBackend(s, runner)
	require.NoError(t, err)
	f.sb = &Sandbox{spec: s, env: defaultEnv(os.Environ(), s.Env), backend: b, logf: func(string, ...any) {}}
	return f
}

// recorded returns the arguments the runner received last.
func (f *seatbeltFixture) recorded(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.runnerDir, "args"))
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

// params parses the recorded -DNAME=VALUE arguments.
func params(args []string) map[string]string {
	out := map[string]string{}
	for _, a := range args {
		if a == "--" {
			break
		}
		if kv, ok := strings.CutPrefix(a, "-D"); ok {
			name, value, _ := strings.Cut(kv, "=")
			out[name] = value
		}
	}
	return out
}

func TestSeatbeltProbesProfile(t *testing.T) {
	f := newSeatbeltFixture(t, standInRunner, Config{})
	args := f.recorded(t)
	require.GreaterOrEqual(t, len(args), 4)
	assert.Equal(t, "-p", args[0])
	assert.Equal(t, []string{"--", seatbelt.ProbeCommand}, args[len(args)-2:])
	tmp := params(args)["TMPDIR"]
	require.NotEmpty(t, tmp)
	assert.NoDirExists(t, tmp, "the probe's temporary directory is removed")
}

func TestSeatbeltProbeFailureFailsNew(t *testing.T) {
	dir := t.TempDir()
	runner := filepath.Join(dir, "sandbox-exec")
	require.NoError(t, os.WriteFile(runner, []byte(rejectingRunner), 0o755))
	s, err := Config{Workspace: t.TempDir()}.resolve()
	require.NoError(t, err)
	_, err = newSeatbeltBackend(s, runner)
	var se *SetupError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, LayerSeatbelt, se.Layer)
	assert.Contains(t, err.Error(), "profile rejected")
	assert.Contains(t, err.Error(), "unbound variable: frobnicate")

	_, err = newSeatbeltBackend(s, filepath.Join(dir, "missing"))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, filepath.Join(dir, "missing"), se.Path)
}

func TestSeatbeltRunsCommandUnderProfile(t *testing.T) {
	f := newSeatbeltFixture(t, standInRunner, Config{Network: NetworkNone})
	require.NoError(t, os.Mkdir(filepath.Join(f.workspace, "sub"), 0o755))
	c := f.sb.Command(context.Background(), "sh", "-c", `echo "$TMPDIR"; pwd; touch "$TMPDIR/x"`)
	c.Dir = "sub"
	out, err := c.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, filepath.Join(f.workspace, "sub"), lines[1])

	args := f.recorded(t)
	prm := params(args)
	// Off macOS the generator still rewrites /tmp to /private/tmp.
	assert.Equal(t, prm["TMPDIR"], seatbelt.Canonical(lines[0]), "TMPDIR is the profile's temporary directory")
	assert.NoDirExists(t, lines[0], "removed after the command")
	assert.Equal(t, seatbelt.Canonical(f.workspace), prm["WORKSPACE"])
	names := make([]string, 0, len(prm))
	for n := range prm {
		names = append(names, n)
	}
	require.NoError(t, sbplcheck.Check(args[1], names))
	assert.Contains(t, args[1], "(allow system-socket (socket-domain AF_UNIX))", "network none")
	i := slices.Index(args, "--")
	require.Equal(t, len(args)-4, i)
	assert.True(t, filepath.IsAbs(args[i+1]), "the command is passed by absolute path, not looked up by the runner")
	assert.Equal(t, "sh", filepath.Base(args[i+1]))
}

func TestSeatbeltProtectsPlantingPaths(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	f := newSeatbeltFixture(t, standInRunner, Config{Workspace: ws, AllowPlanting: []string{".envrc"}})
	require.NoError(t, f.sb.Command(context.Background(), "true").Run())
	var protected []string
	for name, v := range params(f.recorded(t)) {
		if strings.HasPrefix(name, "PROTECTED_") {
			protected = append(protected, strings.TrimPrefix(v, seatbelt.Canonical(f.workspace)+"/"))
		}
	}
	assert.Contains(t, protected, ".git")
	assert.Contains(t, protected, ".bashrc")
	assert.NotContains(t, protected, ".envrc", "allowed by AllowPlanting")
}

func TestSeatbeltExitStatus(t *testing.T) {
	f := newSeatbeltFixture(t, standInRunner, Config{})
	err := f.sb.Command(context.Background(), "sh", "-c", "exit 3").Run()
	var ee *ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.ExitCode())
}

func TestSeatbeltStartErrors(t *testing.T) {
	hiddenDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(hiddenDir, "secret-tool"), []byte("#!/bin/sh\n"), 0o755))
	f := newSeatbeltFixture(t, standInRunner, Config{HiddenPaths: []string{hiddenDir}})
	require.NoError(t, os.WriteFile(filepath.Join(f.workspace, "noexec"), []byte("#!/bin/sh\n"), 0o644))
	env := []string{"PATH=" + hiddenDir + ":/usr/bin:/bin"}
	tests := []struct {
		name, cmd, dir string
		want           error
		layer          Layer
	}{
		{"missing", "no-such-command-xyz", "", ErrNotFound, ""},
		{"not executable", "./noexec", "", ErrNotExecutable, ""},
		{"directory", "/", "", ErrNotExecutable, ""},
		{"hidden by path", filepath.Join(hiddenDir, "secret-tool"), "", ErrNotFound, ""},
		{"hidden in PATH", "secret-tool", "", ErrNotFound, ""},
		{"missing workdir", "true", "nope", nil, LayerWorkdir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.sb.Command(context.Background(), tt.cmd)
			c.Env, c.Dir = env, tt.dir
			err := c.Run()
			if tt.want != nil {
				var ee *ExecError
				require.ErrorAs(t, err, &ee)
				assert.ErrorIs(t, err, tt.want)
				return
			}
			var se *SetupError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.layer, se.Layer)
		})
	}
	// Without hiding, the same lookups succeed: the hidden cases above fail
	// because of the hiding, not the setup.
	p, err := seatbelt.LookPath("secret-tool", f.workspace, env, nil)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(hiddenDir, "secret-tool"), p)
}

func TestSeatbeltKillEndsProcessGroup(t *testing.T) {
	f := newSeatbeltFixture(t, standInRunner, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	c := f.sb.Command(ctx, "sh", "-c", "sleep 60 & echo $!; wait")
	c.Stdout = out
	require.NoError(t, c.Start())
	child := waitForPid(t, out)
	start := time.Now()
	cancel()
	err := c.Wait()
	require.Error(t, err)
	assert.Less(t, time.Since(start), 10*time.Second)
	assertGone(t, child)
}

func TestSeatbeltWaitEndsLeftovers(t *testing.T) {
	f := newSeatbeltFixture(t, standInRunner, Config{})
	out, err := f.sb.Command(context.Background(), "sh", "-c", "sleep 60 >/dev/null & echo $!").Output()
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	assertGone(t, child)
}

func waitForPid(t *testing.T, out *syncBuffer) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		n, err := strconv.Atoi(strings.TrimSpace(string(out.Bytes())))
		pid = n
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	return pid
}

// assertGone waits until pid no longer runs. A killed process reparented to
// an init that does not reap stays a zombie, which counts as gone.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	assert.Eventually(t, func() bool {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err == nil && strings.Contains(string(stat), ") Z ")
	}, 10*time.Second, 20*time.Millisecond, "pid %d still runs", pid)
}

func TestProbeSeatbelt(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), mode))
		return p
	}
	works := script("works", standInRunner, 0o755)
	cases := []struct {
		name      string
		runner    string
		available bool
		reason    string
	}{
		{"applies a profile", works, true, ""},
		{"rejects it", script("rejects", rejectingRunner, 0o755), false, "cannot apply a profile: sandbox-exec: unbound variable: frobnicate"},
		{"silent failure", script("silent", "#!/bin/sh\nexit 1\n", 0o755), false, "cannot apply a profile: exit status 1"},
		{"missing", filepath.Join(dir, "missing"), false, "missing not found"},
		{"not executable", script("plain", standInRunner, 0o644), false, "plain is not executable"},
		{"a directory", dir, false, "is not executable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := ladder.ProbeSeatbelt(c.runner)
			assert.Equal(t, LayerSeatbelt, l.Name)
			assert.Equal(t, c.available, l.Available, l.Reason)
			if c.available {
				assert.Equal(t, c.runner, l.Detail)
				return
			}
			assert.Contains(t, l.Reason, c.reason)
			assert.NotContains(t, l.Reason, "\n")
		})
	}
	args, err := os.ReadFile(filepath.Join(dir, "args"))
	require.NoError(t, err)
	assert.Equal(t, "-p\x00"+seatbelt.DoctorProfile+"\x00--\x00"+seatbelt.ProbeCommand+"\x00", string(args),
		"sandbox-exec gets the profile as a string and runs the probe command by its absolute path")
}

func TestSeatbeltOrNone(t *testing.T) {
	runner := filepath.Join(t.TempDir(), "sandbox-exec")
	require.NoError(t, os.WriteFile(runner, []byte(rejectingRunner), 0o755))
	newSpec := func(fallback Fallback) (*spec, *[]string) {
		s, err := Config{Workspace: t.TempDir(), Fallback: fallback}.resolve()
		require.NoError(t, err)
		var logged []string
		s.logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
		return s, &logged
	}

	s, logged := newSpec(FallbackFail)
	_, err := seatbeltOrNone(s, runner)
	var se *SetupError
	require.ErrorAs(t, err, &se, "fail closed")
	assert.Equal(t, LayerSeatbelt, se.Layer)
	assert.Empty(t, *logged)

	s, logged = newSpec(FallbackWarn)
	b, err := seatbeltOrNone(s, runner)
	require.NoError(t, err)
	assert.IsType(t, &directBackend{}, b)
	require.Len(t, *logged, 1)
	assert.Contains(t, (*logged)[0], "corral: sandbox disabled: commands run with full host access, without seatbelt (profile rejected")

	works := filepath.Join(t.TempDir(), "sandbox-exec")
	require.NoError(t, os.WriteFile(works, []byte(standInRunner), 0o755))
	s, logged = newSpec(FallbackWarn)
	b, err = seatbeltOrNone(s, works)
	require.NoError(t, err)
	assert.IsType(t, &seatbeltBackend{}, b)
	assert.Empty(t, *logged, "nothing to warn about on the seatbelt rung")
}
