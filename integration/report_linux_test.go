package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// reportScene is a workspace, a directory nothing configures and a hidden
// one.
type reportScene struct {
	ws, outside, hidden string
}

func newReportScene(t *testing.T) reportScene {
	return reportScene{ws: layDir(t), outside: outsideDir(t), hidden: outsideDir(t)}
}

// outsideDir is a new directory that no sandbox makes writable and that
// the caller can write. Not under /tmp, which is the sandbox's own on the
// full rung.
func outsideDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "corral-report-")
	if err != nil {
		t.Skip("needs a writable /var/tmp: " + err.Error())
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, err = filepath.EvalSymlinks(d)
	require.NoError(t, err)
	return d
}

func (s reportScene) config() corral.Config {
	return corral.Config{Workspace: s.ws, HiddenPaths: []string{s.hidden}, Report: true}
}

// runReport runs script in sb and returns the command's report.
func runReport(t *testing.T, sb *corral.Sandbox, script string) []corral.Violation {
	t.Helper()
	c := sb.Command(context.Background(), "sh", "-c", script)
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return c.Report()
}

// findViolation returns the entry for target, or nil.
func findViolation(vs []corral.Violation, kind corral.ViolationKind, target string) *corral.Violation {
	i := slices.IndexFunc(vs, func(v corral.Violation) bool { return v.Kind == kind && v.Target == target })
	if i < 0 {
		return nil
	}
	return &vs[i]
}

// Writes outside the writable paths are refused by the kernel and listed,
// repeats merged; the same script writing in the workspace lists nothing.
// Run without the sandbox, every one of those writes succeeds.
func TestReportWritesOutside(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			s := newReportScene(t)
			script := func(dir string) string {
				return fmt.Sprintf(`cd %[1]s; for i in 1 2 3; do echo x > f 2>/dev/null; done; mkdir d 2>/dev/null; ln -s x l 2>/dev/null; touch %[1]s/t 2>/dev/null; true`, dir)
			}
			// Control: outside any sandbox the script writes all of it.
			out, err := exec.Command("sh", "-c", script(s.outside)).CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, name := range []string{"f", "d", "l", "t"} {
				_, err := os.Lstat(filepath.Join(s.outside, name))
				require.NoError(t, err, "the control run made %s", name)
			}
			s.outside = outsideDir(t)
			sb, _ := rungSandbox(t, rung, s.config())
			vs := runReport(t, sb, script(s.outside))
			f := findViolation(vs, corral.ViolationWrite, filepath.Join(s.outside, "f"))
			require.NotNil(t, f, "report: %+v", vs)
			assert.Equal(t, 3, f.Count, "repeats are one entry")
			assert.Equal(t, "outside the writable paths", f.Rule)
			assert.Equal(t, "sh", f.Process)
			for _, name := range []string{"d", "l", "t"} {
				assert.NotNil(t, findViolation(vs, corral.ViolationWrite, filepath.Join(s.outside, name)), "%s in %+v", name, vs)
			}
			entries, err := os.ReadDir(s.outside)
			require.NoError(t, err)
			assert.Empty(t, entries, "the kernel refused every write")

			// Control: the same script in the workspace is refused nothing.
			assert.Empty(t, runReport(t, sb, script(s.ws)))
			_, err = os.Stat(filepath.Join(s.ws, "f"))
			require.NoError(t, err)
		})
	}
}

// A write under a hidden path names the --hide that hides it.
func TestReportHidden(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			s := newReportScene(t)
			sb, _ := rungSandbox(t, rung, s.config())
			target := filepath.Join(s.hidden, "planted")
			vs := runReport(t, sb, "echo x > "+target+" 2>/dev/null; true")
			v := findViolation(vs, corral.ViolationWrite, target)
			require.NotNil(t, v, "report: %+v", vs)
			assert.Equal(t, "hidden by --hide "+s.hidden, v.Rule)
			_, err := os.Stat(target)
			assert.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

// A shell start-up file at the top of the workspace cannot be rewritten,
// and the report says it is protected. Run without the sandbox, the same
// write succeeds.
func TestReportPlanting(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			s := newReportScene(t)
			target := filepath.Join(s.ws, ".bashrc")
			require.NoError(t, os.WriteFile(target, []byte("# mine\n"), 0o644))
			// Control: without the sandbox the file is rewritten.
			ctl := filepath.Join(layDir(t), ".bashrc")
			require.NoError(t, os.WriteFile(ctl, []byte("# mine\n"), 0o644))
			require.NoError(t, exec.Command("sh", "-c", "echo evil > "+ctl).Run())
			b, err := os.ReadFile(ctl)
			require.NoError(t, err)
			require.Equal(t, "evil\n", string(b))

			sb, _ := rungSandbox(t, rung, s.config())
			vs := runReport(t, sb, "echo evil > "+target+" 2>/dev/null; true")
			v := findViolation(vs, corral.ViolationPlant, target)
			require.NotNil(t, v, "report: %+v", vs)
			assert.Equal(t, "protected: .bashrc", v.Rule)
			b, err = os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, "# mine\n", string(b), "nothing planted on the host")
		})
	}
}

// git hooks planted in a new repository are reported (full rung: the
// guard keeps them from the host).
func TestReportGitHooks(t *testing.T) {
	s := newReportScene(t)
	sb, _ := rungSandbox(t, corral.RungFull, s.config())
	vs := runReport(t, sb, "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit")
	i := slices.IndexFunc(vs, func(v corral.Violation) bool {
		return v.Kind == corral.ViolationPlant && v.Rule == "protected: .git/hooks"
	})
	require.GreaterOrEqual(t, i, 0, "report: %+v", vs)
	_, err := os.Stat(filepath.Join(s.ws, ".git", "hooks", "pre-commit"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A command trying thousands of different paths makes a bounded report:
// the init keeps a few hundred and counts the rest in one entry.
func TestReportFloodBounded(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			s := newReportScene(t)
			sb, _ := rungSandbox(t, rung, s.config())
			const n = 2000
			vs := runReport(t, sb, fmt.Sprintf("cd %s; i=0; while [ $i -lt %d ]; do true > f$i 2>/dev/null; i=$((i+1)); done; true", s.outside, n))
			require.Less(t, len(vs), 300, "bounded")
			require.NotEmpty(t, vs)
			total := 0
			for _, v := range vs {
				total += v.Count
			}
			assert.Equal(t, n, total, "every refusal counted")
			last := vs[len(vs)-1]
			assert.Equal(t, corral.RuleOmitted, last.Rule)
			assert.Empty(t, last.Target)
		})
	}
}

// OnViolation hears of each refusal once; without Report nothing watches
// the writes.
func TestReportCallbackAndOff(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			s := newReportScene(t)
			var mu sync.Mutex
			var heard []corral.Violation
			cfg := s.config()
			cfg.Report = false
			cfg.OnViolation = func(v corral.Violation) {
				mu.Lock()
				heard = append(heard, v)
				mu.Unlock()
			}
			sb, _ := rungSandbox(t, rung, cfg)
			target := filepath.Join(s.outside, "f")
			vs := runReport(t, sb, "for i in 1 2 3; do echo x > "+target+" 2>/dev/null; done; true")
			require.NotNil(t, findViolation(vs, corral.ViolationWrite, target))
			mu.Lock()
			assert.Len(t, heard, 1, "heard once: %+v", heard)
			mu.Unlock()

			off := s.config()
			off.Report = false
			sbOff, _ := rungSandbox(t, rung, off)
			assert.Empty(t, runReport(t, sbOff, "echo x > "+target+" 2>/dev/null; true"))

			// A single command can ask for it.
			c := sbOff.Command(context.Background(), "sh", "-c", "echo x > "+target+" 2>/dev/null; true")
			c.ReportWrites = true
			require.NoError(t, c.Run())
			assert.NotNil(t, findViolation(c.Report(), corral.ViolationWrite, target))
		})
	}
}
