package integration

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/testhook"
)

// layProbeSource attempts one escape per subcommand; see the file.
//
//go:embed testdata/layers_probe.c
var layProbeSource []byte

// layRungs are the rungs that claim to stop the attacks in layers_test.go.
var layRungs = []corral.Rung{corral.RungFull, corral.RungLandlock}

// layScene is one test's host side: a workspace holding the compiled probe,
// and a directory outside it that nothing configures.
type layScene struct {
	ws      string
	outside string
	probe   string
}

func newLayScene(t *testing.T) *layScene {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is needed to build the probe: " + err.Error())
	}
	s := &layScene{ws: layDir(t), outside: layDir(t)}
	src := filepath.Join(s.ws, "layers_probe.c")
	s.probe = filepath.Join(s.ws, "layers_probe")
	require.NoError(t, os.WriteFile(src, layProbeSource, 0o644))
	out, err := exec.Command(gcc, "-O1", "-o", s.probe, src).CombinedOutput()
	require.NoError(t, err, "gcc: %s", out)
	return s
}

// layDir is a temporary directory with symlinks resolved.
func layDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func (s *layScene) config() corral.Config {
	return corral.Config{Workspace: s.ws}
}

// layRungLayers are the layers a test switches off to force each rung.
var layRungLayers = map[corral.Rung][]string{
	corral.RungFull:     nil,
	corral.RungLandlock: {string(corral.LayerUserNS)},
	corral.RungNone:     {string(corral.LayerUserNS), string(corral.LayerLandlock)},
}

// sandbox builds a sandbox from cfg on the given rung, or skips the test
// when the host cannot give that rung with all of its layers.
func (s *layScene) sandbox(t *testing.T, rung corral.Rung, cfg corral.Config) (*corral.Sandbox, *[]string) {
	t.Helper()
	return rungSandbox(t, rung, cfg)
}

// rungSandbox builds a sandbox from cfg on the given rung, or skips the
// test when the host cannot give that rung with all of its layers.
func rungSandbox(t *testing.T, rung corral.Rung, cfg corral.Config) (*corral.Sandbox, *[]string) {
	t.Helper()
	off := layRungLayers[rung]
	if len(off) > 0 {
		cfg.Fallback = corral.FallbackWarn
	}
	restore := testhook.Disable(off...)
	defer restore()
	r, err := corral.Doctor(cfg)
	require.NoError(t, err)
	if !r.OK || r.Rung != rung || len(layersWithout(r)) != len(off) {
		hosttest.Skipf(t, "this host cannot give rung %s with every layer: %s", rung, layMissing(r))
	}
	var logs []string
	cfg.Logf = func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return sb, &logs
}

// layersWithout is what r's rung goes without of the host's layers: the
// guard of protected names, which the landlock rung goes without whatever
// the host, is no layer of the host's.
func layersWithout(r *corral.Report) []string {
	var out []string
	for _, w := range r.Without {
		if w != string(corral.LayerProtect) {
			out = append(out, w)
		}
	}
	return out
}

func layMissing(r *corral.Report) string {
	var parts []string
	for _, l := range r.Layers {
		if !l.Available {
			parts = append(parts, string(l.Name)+": "+l.Reason)
		}
	}
	if r.Problem != "" {
		parts = append(parts, r.Problem)
	}
	return strings.Join(parts, "; ")
}

// layResult is what the probe printed ("name result" lines) and how it
// ended.
type layResult struct {
	vals   map[string]string
	out    string
	status syscall.WaitStatus
	err    error
}

func (r layResult) get(name string) string {
	if v, ok := r.vals[name]; ok {
		return v
	}
	return "missing (" + r.out + ")"
}

// killedBy reports whether the probe died of sig.
func (r layResult) killedBy(sig syscall.Signal) bool {
	return r.status.Signaled() && r.status.Signal() == sig
}

func parseLay(out []byte) map[string]string {
	vals := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok {
			vals[k] = v
		}
	}
	return vals
}

// inside runs the probe in sb.
func (s *layScene) inside(t *testing.T, sb *corral.Sandbox, stdin *os.File, args ...string) layResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := sb.Command(ctx, s.probe, args...)
	if stdin != nil {
		c.Stdin = stdin
	}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	r := layResult{vals: parseLay(out), out: string(out) + stderr.String(), err: err}
	var ee *corral.ExitError
	if errors.As(err, &ee) {
		r.status = ee.Sys().(syscall.WaitStatus)
	} else {
		require.NoError(t, err, "probe %v: %s", args, r.out)
	}
	return r
}

// outsideRun runs the probe on the host, the control run of each attack.
func (s *layScene) outsideRun(t *testing.T, stdin *os.File, args ...string) layResult {
	t.Helper()
	c := exec.Command(s.probe, args...)
	c.Dir = s.ws
	if stdin != nil {
		c.Stdin = stdin
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as the sandbox starts it
	}
	out, err := c.Output()
	r := layResult{vals: parseLay(out), out: string(out), err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.status = ee.Sys().(syscall.WaitStatus)
	} else {
		require.NoError(t, err, "probe %v: %s", args, out)
	}
	return r
}

// layRoot says the suite runs as root, where the kernel itself refuses
// nothing and every control run reaches the call under test.
func layRoot() bool { return os.Geteuid() == 0 }

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
