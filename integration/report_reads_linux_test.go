package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// readScene is a home holding a hidden directory with a secret in it, and
// a file beside it that nothing hides; in the workspace, which both rungs
// let the command read (the landlock rung carves /tmp and /var/tmp out).
type readScene struct {
	ws, home, hidden, secret, plain string
}

func newReadScene(t *testing.T) readScene {
	ws := layDir(t)
	home := filepath.Join(ws, "home")
	s := readScene{ws: ws, home: home, hidden: filepath.Join(home, "hidden"), plain: filepath.Join(home, "plain")}
	s.secret = filepath.Join(s.hidden, "secret")
	require.NoError(t, os.MkdirAll(s.hidden, 0o755))
	require.NoError(t, os.WriteFile(s.secret, []byte("secret\n"), 0o644))
	require.NoError(t, os.WriteFile(s.plain, []byte("plain\n"), 0o644))
	return s
}

// readProbe reads the secret by an absolute path, lists the hidden
// directory by a path relative to the working directory, and reads the
// file beside it.
const readProbe = `cat ~/hidden/secret; cd ~ && ls hidden; cat ~/plain`

// run runs readProbe with HOME at the scene's home, in sb or, without one,
// on the host, and returns its output and the command's report.
func (s readScene) run(t *testing.T, sb *corral.Sandbox) (string, []corral.Violation) {
	t.Helper()
	env := append(os.Environ(), "HOME="+s.home)
	if sb == nil {
		c := exec.Command("sh", "-c", readProbe)
		c.Env = env
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out), nil
	}
	c := sb.Command(context.Background(), "sh", "-c", readProbe+"; true")
	c.Env = []string{"HOME=" + s.home, "PATH=" + os.Getenv("PATH")}
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out), c.Report()
}

// A read of a hidden path is refused by the kernel and reported with the
// rule that hides it: cat of a file inside, ls of the directory by a
// relative name. The file beside it is read and not reported. Run without
// the sandbox, the same probe reads the secret and lists it.
func TestReportHiddenReads(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			s := newReadScene(t)
			out, _ := s.run(t, nil)
			require.Equal(t, "secret\nsecret\nplain\n", out, "the control reads the secret and lists it")

			cfg := corral.Config{Workspace: s.ws, HiddenPaths: []string{s.hidden}, ReportReads: true}
			sb, _ := rungSandbox(t, rung, cfg)
			out, vs := s.run(t, sb)
			assert.NotContains(t, out, "secret\n", "the kernel refused the reads")
			assert.Contains(t, out, "plain\n")
			rule := "hidden by --hide " + tildeOf(t, s.hidden)
			for _, target := range []string{s.secret, s.hidden} {
				v := findViolation(vs, corral.ViolationRead, target)
				if assert.NotNil(t, v, "%s in %+v", target, vs) {
					assert.Equal(t, rule, v.Rule)
				}
			}
			assert.Equal(t, "cat", findViolation(vs, corral.ViolationRead, s.secret).Process)
			assert.Nil(t, findViolation(vs, corral.ViolationRead, s.plain), "a read of a path nothing hides: %+v", vs)
			for _, v := range vs {
				assert.Equal(t, corral.ViolationRead, v.Kind, "only the reads: %+v", v)
			}
		})
	}
}

// Reads are listed only when asked for: not with the report off, nor with
// the report of writes alone.
func TestReportHiddenReadsOff(t *testing.T) {
	for _, rung := range layRungs {
		for _, report := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/report=%v", rung, report), func(t *testing.T) {
				s := newReadScene(t)
				sb, _ := rungSandbox(t, rung, corral.Config{Workspace: s.ws, HiddenPaths: []string{s.hidden}, Report: report})
				out, vs := s.run(t, sb)
				assert.NotContains(t, out, "secret\n", "the kernel refused the reads")
				assert.Empty(t, vs)
			})
		}
	}
}

// tildeOf writes p as the report's rules do: under the home directory as
// ~/...
func tildeOf(t *testing.T, p string) string {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	if home, err = filepath.EvalSymlinks(home); err == nil && home != "/" {
		if rel, ok := strings.CutPrefix(p, home); ok && (rel == "" || rel[0] == '/') {
			return "~" + rel
		}
	}
	return p
}
