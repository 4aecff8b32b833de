package integration

import (
	"archive/zip"
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
	"github.com/corralhq/corral/internal/sandboxtest"
)

// everyday is a command a person or an agent runs every day, which the
// sandbox refuses nothing: its run must print no corral: line. needs are
// the programs it runs beyond the shell's basics; scope says it runs with
// a persistent home (corral run --scope), where caches are written.
type everyday struct {
	name, script string
	needs        []string
	scope        bool
}

// battery are the everyday commands. Each runs offline: the packages it
// installs are made on the host beforehand, in $PKG.
var battery = []everyday{
	{name: "ls -l", script: "ls -l / /usr/bin >/dev/null && ls -la \"$WS\""},
	{name: "id", script: "id && id -un && id -gn"},
	{name: "whoami", script: "whoami"},
	{name: "ls -l home", script: "ls -la ~ >/dev/null"},
	{name: "mkdir -p existing", script: "mkdir -p /usr/lib /tmp/x \"$WS/a/b\" && mkdir -p /usr /usr/bin"},
	{name: "rm -f missing", script: "rm -f /usr/no-such-file /etc/no-such-file \"$WS/no-such-file\""},
	{name: "rm -rf missing", script: "rm -rf /usr/no-such-dir \"$WS/no-such-dir\""},
	{name: "files in the workspace", script: "cd \"$WS\" && echo x > f && cp f g && mv g h && ln -s h l && readlink l && cat f h && rm f h l"},
	{name: "sed -i", script: "cd \"$WS\" && printf 'a\\nb\\n' > s && sed -i s/a/c/ s && grep -q c s"},
	{name: "tar", script: "cd \"$WS\" && mkdir -p t/d && echo x > t/d/f && tar czf t.tgz t && tar tzf t.tgz >/dev/null && mkdir u && tar xzf t.tgz -C u && test -f u/t/d/f"},
	{name: "find and grep", script: "find /etc -maxdepth 1 -name 'host*' >/dev/null; grep -r root /etc/passwd >/dev/null; find \"$WS\" -type f >/dev/null"},
	{name: "tmp", script: "f=$(mktemp) && echo x > \"$f\" && rm \"$f\" && d=$(mktemp -d) && rmdir \"$d\""},
	{name: "shell redirections", script: "echo x >/dev/null; echo y >&2 2>/dev/null; cat </dev/null; : > /dev/null"},
	{name: "test -w", script: "test -w /usr || echo read-only; test -w \"$WS\""},
	{name: "ps and uname", script: "ps aux >/dev/null; uname -a; date >/dev/null; env >/dev/null"},
	{name: "git", needs: []string{"git"}, script: `cd "$WS" && git init -q repo && cd repo && echo x > f && git add f &&
		git -c user.name=t -c user.email=t@t commit -qm first && git status --short && git log --oneline >/dev/null &&
		git checkout -qb topic && git branch >/dev/null && git config user.name t && git tag v1`},
	{name: "git clone", needs: []string{"git"}, script: `cd "$WS" && git init -q src && git -C src -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
		git clone -q src dst && git -C dst log --oneline >/dev/null`},
	{name: "python", needs: []string{"python3"}, script: `python3 -c 'import json, os, pwd, tempfile; tempfile.mkstemp(); print(pwd.getpwuid(os.getuid()).pw_name)'`},
	{name: "python module", needs: []string{"python3"}, script: `cd "$WS" && mkdir -p mod && echo 'X = 1' > mod/m.py && cd mod && python3 -c 'import m; print(m.X)'`},
	{name: "python venv", needs: []string{"python3"}, script: `python3 -m venv --without-pip "$WS/venv" && "$WS/venv/bin/python" -c 'print(1)'`},
	{name: "pip install", needs: []string{"python3", "pip"}, scope: true,
		script: `python3 -m pip install -q --no-index --user --break-system-packages --no-warn-script-location "$PKG/everyday-1.0-py3-none-any.whl" && python3 -c 'import everyday'`},
	{name: "go build", needs: []string{"go"}, scope: true,
		script: `cp -r "$PKG/gomod" "$WS/gomod" && cd "$WS/gomod" && GOFLAGS=-mod=mod go build -o app . && ./app && go vet .`},
	{name: "node", needs: []string{"node"}, script: `node -e 'console.log(require("os").userInfo().username)'`},
	{name: "npm install", needs: []string{"npm"}, scope: true,
		script: `mkdir -p "$WS/app" && cd "$WS/app" && echo '{"name":"app","version":"1.0.0"}' > package.json && npm install --offline --no-audit --no-fund "$PKG/npmpkg" >/dev/null && test -f node_modules/everyday/index.js`},
}

// packages makes the local packages the battery installs: a wheel, a Go
// module and an npm package, in a directory commands can read.
func packages(t *testing.T) string {
	t.Helper()
	dir := outsideDir(t)
	require.NoError(t, os.Chmod(dir, 0o755))
	// A wheel is a zip of the package and its metadata: pip installs it
	// without a build backend.
	f, err := os.Create(filepath.Join(dir, "everyday-1.0-py3-none-any.whl"))
	require.NoError(t, err)
	z := zip.NewWriter(f)
	for name, body := range map[string]string{
		"everyday/__init__.py":            "X = 1\n",
		"everyday-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: everyday\nVersion: 1.0\n",
		"everyday-1.0.dist-info/WHEEL":    "Wheel-Version: 1.0\nGenerator: corral-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"everyday-1.0.dist-info/RECORD":   "",
	} {
		w, err := z.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, z.Close())
	require.NoError(t, f.Close())
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	write("gomod/go.mod", "module example.com/everyday\n\ngo 1.21\n")
	write("gomod/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"ok\") }\n")
	write("npmpkg/package.json", `{"name":"everyday","version":"1.0.0","main":"index.js"}`)
	write("npmpkg/index.js", "module.exports = 1;\n")
	return dir
}

// missingTool says which of names this host lacks, "" for none.
func missingTool(names []string) string {
	for _, n := range names {
		switch n {
		case "pip":
			if exec.Command("python3", "-m", "pip", "--version").Run() != nil {
				return "pip (python3 -m pip)"
			}
		default:
			if _, err := exec.LookPath(n); err != nil {
				return n
			}
		}
	}
	return ""
}

// quietRun is one command's run: what would make corral run print a
// corral: line (the summary, what a protected name kept, the limits hit,
// the lines said while it ran), with the report and the output.
type quietRun struct {
	summary string
	lines   []string
	report  []corral.Violation
	out     string
	err     error
}

func runQuiet(t *testing.T, cfg corral.Config, script string, env []string) quietRun {
	t.Helper()
	var r quietRun
	cfg.Report = true
	cfg.Logf = func(format string, args ...any) { r.lines = append(r.lines, fmt.Sprintf(format, args...)) }
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	c := sb.Command(context.Background(), "sh", "-c", script)
	c.Env = env
	out, err := c.CombinedOutput()
	r.out, r.err, r.report = string(out), err, c.Report()
	r.summary = corral.Summary(r.report)
	r.lines = append(r.lines, c.Dropped()...)
	for _, v := range c.LimitsHit() {
		r.lines = append(r.lines, v.Target)
	}
	return r
}

// The everyday battery: listing, id, mkdir -p of what exists, rm -f of
// what does not, git, python, a venv, pip, go and npm in a persistent home
// (corral run --scope): each succeeds and the sandbox reports nothing it
// would show, not the writes that succeeded in the layered home, not the
// EEXIST of mkdir -p /usr, not the C library's look for nscd's or
// systemd's sockets (which stays in the report, marked a probe).
func TestEverydayCommandsReportNothing(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	pkg := packages(t)
	for _, e := range battery {
		t.Run(e.name, func(t *testing.T) {
			if miss := missingTool(e.needs); miss != "" {
				t.Skip(miss + " is not installed on this host")
			}
			ws := layDir(t)
			cfg := corral.Config{Workspace: ws}
			if e.scope {
				cfg.PersistHome = filepath.Join(outsideDir(t), "home")
			}
			sandboxtest.Require(t, cfg)
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "WS=" + ws, "PKG=" + pkg,
				"GOTOOLCHAIN=local", "GOPROXY=off", "npm_config_update_notifier=false"}
			r := runQuiet(t, cfg, e.script, env)
			require.NoError(t, r.err, "%s", r.out)
			assert.Empty(t, r.summary, "no summary line: %+v", r.report)
			assert.Empty(t, r.lines, "no corral: line")
			for _, v := range r.report {
				assert.True(t, v.Probe, "only probes are listed: %+v", v)
			}
		})
	}
}

// Each real refusal is one accurate line: the write the policy refused,
// named before the C library's probes and with what would allow it; a
// unix socket a program asks for itself is no probe, and is named by its
// family with --allow-unix-sockets. Run without the sandbox, each of
// these calls succeeds.
func TestRealRefusalsReportedAccurately(t *testing.T) {
	outside := outsideDir(t)
	require.NoError(t, os.Chmod(outside, 0o777))
	unixSocket := `python3 -c 'import socket; socket.socket(socket.AF_UNIX)'`
	if missingTool([]string{"python3"}) != "" {
		t.Skip("python3 is not installed on this host")
	}
	tests := []struct {
		name, script, summary string
	}{
		{"a write outside", "echo x > $OUT/x; ls -l >/dev/null; id >/dev/null",
			"refused 1 write (outside the writable paths), e.g. $OUT/x; --writable (writable_paths) allows it"},
		{"mkdir -p of a new directory outside", "mkdir -p $OUT/new/dir",
			"refused 1 write (outside the writable paths), e.g. $OUT/new; --writable (writable_paths) allows it"},
		{"a unix socket", unixSocket,
			"refused 1 system call (system call filter, EPERM: unix sockets reach host daemons through socket files, docker.sock among them), e.g. socket(AF_UNIX); --allow-unix-sockets (allow_unix_sockets) allows it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(outside, strings.ReplaceAll(tt.name, " ", "-"))
			require.NoError(t, os.Mkdir(dir, 0o777))
			require.NoError(t, os.Chmod(dir, 0o777))
			env := []string{"PATH=" + os.Getenv("PATH"), "OUT=" + dir}
			// Control: without the sandbox every call succeeds.
			c := exec.Command("sh", "-c", tt.script)
			c.Env = env
			out, err := c.CombinedOutput()
			require.NoError(t, err, "control: %s", out)
			require.NoError(t, os.RemoveAll(dir))
			require.NoError(t, os.Mkdir(dir, 0o777))
			require.NoError(t, os.Chmod(dir, 0o777))

			for _, rung := range layRungs {
				t.Run(string(rung), func(t *testing.T) {
					cfg := corral.Config{Workspace: layDir(t), Report: true}
					sb, logs := rungSandbox(t, rung, cfg)
					c := sb.Command(context.Background(), "sh", "-c", tt.script)
					c.Env = env
					out, _ := c.CombinedOutput()
					assert.Equal(t, strings.ReplaceAll(tt.summary, "$OUT", dir), corral.Summary(c.Report()), "%s\n%+v", out, c.Report())
					for _, l := range *logs {
						assert.NotContains(t, l, "refused", "the summary is the one line")
					}
				})
			}
		})
	}
}

// `id` on a host whose nsswitch.conf names systemd has the C library look
// for systemd's user database (and nscd's socket) over a unix socket,
// which the filter refuses: listed, marked a probe, and left out of the
// summary. The same socket asked for by a program itself is no probe
// (TestRealRefusalsReportedAccurately).
func TestLibcProbesMarked(t *testing.T) {
	conf, err := os.ReadFile("/etc/nsswitch.conf")
	if err != nil || !strings.Contains(string(conf), "systemd") {
		t.Skip("this host's nsswitch.conf names no systemd module: the C library makes no probe to see")
	}
	cfg := corral.Config{Workspace: layDir(t), Report: true}
	sb, _ := rungSandbox(t, corral.RungFull, cfg)
	c := sb.Command(context.Background(), "id")
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	v := findViolation(c.Report(), corral.ViolationSyscall, "socket(AF_UNIX)")
	if v == nil {
		t.Skip("id made no unix socket here (no nss module that looks for one is installed)")
	}
	assert.True(t, v.Probe, "%+v", v)
	assert.Equal(t, "id", v.Process)
	assert.Empty(t, corral.Summary(c.Report()))
}
