package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/testhook"
)

func TestDoctorJSON(t *testing.T) {
	stdout, stderr, code := cli(t, t.TempDir(), "doctor", "--json")
	var r corral.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), "stdout: %s\nstderr: %s", stdout, stderr)
	assert.Len(t, r.Layers, 9)
	assert.Equal(t, corral.FallbackFail, r.Fallback)
	if r.OK {
		assert.Equal(t, 0, code)
		assert.Equal(t, corral.RungFull, r.Rung, "fallback fail runs on the full rung or not at all")
	} else {
		assert.Equal(t, 1, code)
		assert.NotEmpty(t, r.Problem)
	}
}

func TestDoctorText(t *testing.T) {
	stdout, _, code := cli(t, t.TempDir(), "doctor", "--fallback", "warn")
	assert.Equal(t, 0, code, "with fallback warn some rung always runs")
	for _, l := range []string{"user namespace", "proc", "landlock", "seccomp"} {
		assert.Contains(t, stdout, l)
	}
	assert.Contains(t, stdout, "rung:")
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		assert.NotContains(t, line, "<nil>")
	}
}

func TestDoctorBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"doctor", "--fallback", "sometimes"},
		{"doctor", "--net", "wifi"},
		{"doctor", "extra"},
	} {
		_, stderr, code := cli(t, t.TempDir(), args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assertOneLine(t, stderr, "")
	}
}

func TestRunBadFallback(t *testing.T) {
	_, stderr, code := cli(t, workspace(t), "run", "--fallback", "maybe", "--", "true")
	assert.Equal(t, 2, code)
	assertOneLine(t, stderr, `--fallback "maybe"`)
}

const noneHidden = "\ncredential stores hidden by default (--reveal PATH shows one): none here\n"

// TestDoctorTextSeatbelt prints a macOS report, which has one layer.
func TestDoctorTextSeatbelt(t *testing.T) {
	tests := []struct {
		name string
		r    corral.Report
		want string
	}{
		{"works", corral.Report{
			Layers:   []corral.LayerStatus{{Name: corral.LayerSeatbelt, Available: true, Detail: "/usr/bin/sandbox-exec"}},
			Fallback: corral.FallbackFail, Rung: corral.RungSeatbelt, OK: true,
		}, "seatbelt  available (/usr/bin/sandbox-exec)\n\nrung:  seatbelt (fallback fail)\n" + noneHidden},
		{"hidden stores", corral.Report{
			Layers:   []corral.LayerStatus{{Name: corral.LayerSeatbelt, Available: true, Detail: "/usr/bin/sandbox-exec"}},
			Fallback: corral.FallbackFail, Rung: corral.RungSeatbelt, OK: true,
			HiddenByDefault: []string{"/Users/me/.ssh", "/Users/me/.aws"},
		}, "seatbelt  available (/usr/bin/sandbox-exec)\n\nrung:  seatbelt (fallback fail)\n\n" +
			"credential stores hidden by default (--reveal PATH shows one):\n  /Users/me/.ssh\n  /Users/me/.aws\n"},
		{"refused", corral.Report{
			Layers:   []corral.LayerStatus{{Name: corral.LayerSeatbelt, Reason: "/usr/bin/sandbox-exec not found"}},
			Fallback: corral.FallbackFail, Problem: `seatbelt: unavailable: /usr/bin/sandbox-exec not found (set Fallback "warn" to run unsandboxed)`,
		}, "seatbelt  unavailable: /usr/bin/sandbox-exec not found\n\nrung:  none with fallback fail: run refuses to start\n" +
			`       seatbelt: unavailable: /usr/bin/sandbox-exec not found (set Fallback "warn" to run unsandboxed)` + "\n" + noneHidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			printReport(&b, &tt.r)
			assert.Equal(t, tt.want, b.String())
		})
	}
}

// doctorIn runs `corral doctor args...` in this process, where a test may
// switch a layer off.
func doctorIn(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRootCmd(nil)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(append([]string{"doctor"}, args...))
	err := root.Execute()
	var ee *exitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.code
	}
	require.NoError(t, err)
	return "", -1
}

func TestDoctorExitStatusFollowsThePolicy(t *testing.T) {
	if r, err := corral.Doctor(corral.Config{}); err != nil || !r.OK {
		hosttest.Skipf(t, "this host cannot give the full rung, so switching one layer off proves nothing: %v %+v", err, r)
	}
	out, code := doctorIn(t)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "rung:  full (fallback fail)")

	defer testhook.Disable(corral.LayerUserNS)()
	out, code = doctorIn(t)
	assert.Equal(t, 1, code, "fallback fail cannot be met without user namespaces:\n%s", out)
	assert.Contains(t, out, "user namespace     unavailable: disabled by a test")
	assert.Contains(t, out, "run refuses to start")

	out, code = doctorIn(t, "--json")
	assert.Equal(t, 1, code)
	var r corral.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	assert.False(t, r.OK)
	assert.Contains(t, r.Problem, corral.LayerUserNS)

	out, code = doctorIn(t, "--fallback", "warn")
	assert.Equal(t, 0, code, "with fallback warn a lower rung runs:\n%s", out)
	assert.NotContains(t, out, "rung:  full")
	if strings.Contains(out, "rung:  landlock") {
		assert.Contains(t, out, "without user namespace, protect", "the rung names the guard of protected names it goes without")
	}
}

func TestDoctorChecksTheConfigFilesPolicy(t *testing.T) {
	if r, err := corral.Doctor(corral.Config{}); err != nil || !r.OK {
		hosttest.Skipf(t, "this host cannot give the full rung, so switching one layer off proves nothing: %v %+v", err, r)
	}
	warn := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nfallback = \"warn\"\n")
	off := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nmode = \"disabled\"\n")
	defer testhook.Disable(corral.LayerUserNS)()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"the file's fallback", []string{"--config", warn}, 0, "(fallback warn)"},
		{"the flag wins", []string{"--config", warn, "--fallback", "fail"}, 1, "run refuses to start"},
		{"sandbox off", []string{"--config", off, "--agent", "a"}, 0, "rung:  none"},
		{"without the file", nil, 1, "run refuses to start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := doctorIn(t, tc.args...)
			assert.Equal(t, tc.code, code, out)
			assert.Contains(t, out, tc.want)
		})
	}
	_, stderr, code := cli(t, t.TempDir(), "doctor", "--agent", "a")
	assert.Equal(t, 2, code)
	assertOneLine(t, stderr, "--agent needs --config")
	_, stderr, code = cli(t, t.TempDir(), "doctor", "--config", "/no/such.toml")
	assert.Equal(t, 2, code)
	assertOneLine(t, stderr, "/no/such.toml")
}
