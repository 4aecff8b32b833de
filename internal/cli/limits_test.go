package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// validConfig parses args as `corral run` flags, validates them and builds
// the Config, as run does.
func validConfig(t *testing.T, args ...string) (corral.Config, error) {
	t.Helper()
	var f runFlags
	cmd := &cobra.Command{Use: "run"}
	f.register(cmd)
	require.NoError(t, cmd.ParseFlags(args))
	if err := f.validate(); err != nil {
		return corral.Config{}, err
	}
	return f.config()
}

func TestRunLimitFlags(t *testing.T) {
	cfg, err := validConfig(t, "--memory", "2G", "--pids", "512", "--cpus", "1.5", "--tmp-size", "64M",
		"--file-size", "none", "--open-files", "256", "--cpu-time", "90s")
	require.NoError(t, err)
	assert.Equal(t, corral.Limits{Memory: 2 << 30, Pids: 512, CPUs: 1.5, TmpSize: 64 << 20, FileSize: corral.NoLimit,
		OpenFiles: 256, CPUTime: 90 * time.Second}, cfg.Limits)

	cfg, err = validConfig(t)
	require.NoError(t, err)
	assert.Equal(t, corral.Limits{}, cfg.Limits, "no flag: every default")

	file := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox.limits]\nmemory = \"1G\"\npids = 100\ncpu_time = \"none\"\n")
	cfg, err = validConfig(t, "--config", file, "--pids", "none", "--tmp-size", "8M")
	require.NoError(t, err)
	assert.Equal(t, corral.Limits{Memory: 1 << 30, Pids: corral.NoLimit, TmpSize: 8 << 20, CPUTime: corral.NoLimit}, cfg.Limits,
		"the flags given replace the file's values, the others stay")
}

func TestRunLimitFlagErrors(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--memory 2Q", `--memory "2Q": want a size such as 512M or 2G, or none`},
		{"--pids 0", `--pids "0": want a whole number more than zero, or none`},
		{"--cpus -1", `--cpus "-1": want a number of CPUs more than zero such as 1.5, or none`},
		{"--cpu-time 10", `--cpu-time "10": want a duration more than zero such as 30s or 10m, or none`},
		{"--open-files lots", `--open-files "lots": want a whole number more than zero, or none`},
	} {
		_, err := validConfig(t, strings.Fields(tc.args)...)
		require.Error(t, err, tc.args)
		assert.Equal(t, tc.want, err.Error())
	}
}

func TestRunLimitsInConfigFile(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"pids = \"lots\"", `:4: agents[0].sandbox.limits.pids: "lots": want a whole number more than zero, or none`},
		{"memory = 512", `:4: agents[0].sandbox.limits.memory: want a string, not an integer`},
		{"speed = 1", `:4: agents[0].sandbox.limits.speed: unknown key; want one of cpu_time, cpus, file_size, memory, open_files, pids, tmp_size`},
	} {
		file := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox.limits]\n"+tc.body+"\n")
		_, err := validConfig(t, "--config", file)
		var ee *exitError
		require.True(t, errors.As(err, &ee), "got %v", err)
		assert.Equal(t, exitUsage, ee.code)
		assert.Equal(t, file+tc.want, ee.msg)
	}
}

// A command that hits a limit fails as the kernel makes it fail, and the
// CLI says which limit in one line; without the limit the same command
// succeeds.
func TestRunSaysWhichLimitWasHit(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	const fill = `head -c 4M /dev/zero > /tmp/f`
	_, stderr, code := cli(t, ws, "run", "--tmp-size", "1M", "--", "sh", "-c", fill)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "No space left on device")
	assert.Contains(t, stderr, "\ncorral: hit the tmp-size limit (--tmp-size 1M)\n")

	_, stderr, code = cli(t, ws, "run", "--tmp-size", "none", "--", "sh", "-c", fill)
	assert.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "hit the")
}

// A limit this host cannot enforce is a setup failure (125) naming it, and
// one warning with --fallback warn.
func TestRunLimitLadder(t *testing.T) {
	needsSandbox(t)
	r, err := corral.Doctor(corral.Config{Limits: corral.Limits{CPUs: 1}})
	require.NoError(t, err)
	if r.OK {
		t.Skip("this host enforces --cpus: nothing to refuse")
	}
	ws := workspace(t)
	_, stderr, code := cli(t, ws, "run", "--cpus", "1", "--", "true")
	assert.Equal(t, exitSetup, code)
	assertOneLine(t, stderr, "limits: --cpus 1 cannot be enforced: ")
	_, stderr, code = cli(t, ws, "run", "--cpus", "1", "--fallback", "warn", "--", "true")
	assert.Equal(t, 0, code)
	assertOneLine(t, stderr, "corral: running without the limits --cpus 1 (")
}

func TestDoctorListsLimits(t *testing.T) {
	stdout, stderr, _ := cli(t, t.TempDir(), "doctor", "--json")
	var r corral.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), "stdout: %s\nstderr: %s", stdout, stderr)
	if r.Rung == "" {
		t.Skip("no rung runs here: " + r.Problem)
	}
	var names []corral.Limit
	for _, l := range r.Limits {
		names = append(names, l.Name)
		if l.Available {
			assert.NotEmpty(t, l.Mechanism, l.Name)
		} else {
			assert.NotEmpty(t, l.Reason, l.Name)
		}
	}
	assert.Equal(t, corral.AllLimits(), names)

	// A limit the config file asks for that the host cannot enforce makes
	// the doctor say run refuses to start, naming it.
	file := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox.limits]\ncpus = 1\n")
	stdout, _, code := cli(t, t.TempDir(), "doctor", "--config", file)
	if strings.Contains(stdout, "cpus        1      cgroup v2 cpu.max") {
		t.Skip("this host enforces --cpus")
	}
	assert.Equal(t, 1, code, stdout)
	assert.Contains(t, stdout, "but run refuses to start\n       limits: --cpus 1 cannot be enforced: ")
}

func TestProfileListsLimits(t *testing.T) {
	stdout, stderr, code := cli(t, workspace(t), "profile", "--platform", "linux", "--pids", "100", "--tmp-size", "8M", "--cpu-time", "none")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "tmpfs    /tmp (size 8MiB)")
	assert.Contains(t, stdout, "/dev (/dev/shm size 8MiB)")
	for _, line := range []string{"  pids        100\n", "  tmp-size    8M\n", "  memory      none (default)\n", "  cpu-time    none\n"} {
		assert.Contains(t, stdout, line)
	}
}
