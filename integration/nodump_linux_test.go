//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/testhook"
)

// nodumpSteps are what testdata/nodump.c does, each printed "NAME: ok".
var nodumpSteps = []string{"file", "dir", "vscode", "tasks", "cwd", "rename"}

// A process that made itself non-dumpable (prctl(PR_SET_DUMPABLE, 0), as
// ssh-agent and gpg-agent do), or runs a binary it may not read, keeps
// its memory and its /proc links out of reach of a parent without
// CAP_SYS_PTRACE. Its calls that create names are still performed by the
// init, as any other process's: files, directories, renames and names
// relative to its working directory are made, a protected directory is
// staged, and a refused write is reported. With the init's listener kept
// from raising CAP_SYS_PTRACE (the control), the same calls fail; without
// the sandbox they succeed.
func TestCreatedNonDumpable(t *testing.T) {
	cases := []struct {
		name string
		run  string // how the script runs the probe, built as ./nodump
	}{
		{"prctl", `./nodump -d "$DATA"`},
		{"unreadable binary", `cp nodump nd && chmod 0111 nd && ./nd "$DATA"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"bare", "boxed", "no ptrace"} {
				w := newWorld(t)
				buildC(t, "nodump", nodumpC, w.ws)
				var r result
				var cmd *corral.Cmd
				switch mode {
				case "bare":
					r = w.bare(c.run)
				case "no ptrace":
					restore := testhook.Disable(testhook.Ptrace)
					cfg := w.config()
					cfg.Report = true
					r, cmd = w.sandboxedCmd(cfg, c.run)
					restore()
				default:
					cfg := w.config()
					cfg.Report = true
					r, cmd = w.sandboxedCmd(cfg, c.run)
				}
				require.Equal(t, 0, r.code, r.String())
				if mode != "bare" {
					assert.Contains(t, r.stdout, "dumpable: 0", "the probe runs non-dumpable")
				}
				if mode == "no ptrace" {
					// The control: without the capability the init cannot
					// read the name, so creating anything fails.
					assert.Contains(t, r.stdout, "file: Bad address", r.stdout)
					assert.False(t, exists(filepath.Join(w.ws, "renamed")))
					assert.Nil(t, findViolation(cmd.Report(), corral.ViolationWrite, filepath.Join(w.data, "x")),
						"the control reports no refused write")
					continue
				}
				for _, step := range nodumpSteps {
					assert.Contains(t, r.stdout, step+": ok\n", "%s: %s", mode, r.stdout)
				}
				for _, name := range []string{"renamed", "dir", "viacwd"} {
					assert.True(t, exists(filepath.Join(w.ws, name)), "%s: %s is made", mode, name)
				}
				tasks := filepath.Join(w.ws, ".vscode/tasks.json")
				if mode == "bare" {
					require.True(t, fileHas(tasks, "planted"), "the probe plants without the sandbox")
					continue
				}
				assert.False(t, fileHas(tasks, "planted"), "the protected directory was staged and held, not written to the host")
				assert.NotEmpty(t, strings.Join(cmd.Dropped(), "\n"), "the held directory is reported")
				assert.Contains(t, r.stdout, "readonly: Read-only file system")
				assert.NotNil(t, findViolation(cmd.Report(), corral.ViolationWrite, filepath.Join(w.data, "x")),
					"the refused write of a non-dumpable process is reported with its path")
			}
		})
	}
}

// On the landlock rung the init has no user namespace of its own: it
// reaches into a non-dumpable process only where the caller is root (its
// listener keeps root's capabilities), and elsewhere such a process gets
// no connection at all, as docs/layers.md says (the connect goes on to
// Landlock, which refuses it). The same process made dumpable connects
// either way.
func TestEgressLandlockRungNonDumpable(t *testing.T) {
	requireTool(t, "python3")
	s := newEgressScene(t)
	sb, _ := rungSandbox(t, corral.RungLandlock, s.config([]string{"allowed.test"}, nil))
	script := func(dumpable int) string {
		return `python3 -c '
import base64, ctypes, os, socket, urllib.parse
ctypes.CDLL(None).prctl(4, ` + strconv.Itoa(dumpable) + `, 0, 0, 0)
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = b"Proxy-Authorization: Basic " + base64.b64encode((u.username + ":" + u.password).encode()) + b"\r\n"
s = socket.socket()
try:
    s.connect((u.hostname, u.port))
except OSError as e:
    print("connect", e.strerror)
    raise SystemExit
s.sendall(b"GET http://allowed.test:` + strconv.Itoa(s.http) + `/ HTTP/1.0\r\n" + auth + b"\r\n")
print(s.makefile().read())
'`
	}
	r := s.run(sb, script(1))
	require.Equal(t, 0, r.code, r.String())
	require.Contains(t, r.stdout, "hello from allowed.test", "the control: a dumpable process connects")
	r = s.run(sb, script(0))
	require.Equal(t, 0, r.code, r.String())
	if os.Geteuid() == 0 {
		assert.Contains(t, r.stdout, "hello from allowed.test", r.String())
	} else {
		assert.Contains(t, r.stdout, "connect Permission denied", r.String())
	}
}
