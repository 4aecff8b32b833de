package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// The tests in this file run Shell and Exec through real sandboxes.

// testPath is the PATH commands get, so the tests find the system's
// interpreters rather than a user's shims.
const testPath = "/usr/local/bin:/usr/bin:/bin"

// instance is an agent instance laid out as a real one is: the workspace
// and data directory of one agent, the shared tools bin directory, a
// secrets directory the sandbox hides and a directory nothing may write.
type instance struct {
	dir, ws, data, bin, secrets, outside string
	shell                                *Shell
	exec                                 *Exec
}

func newInstance(t *testing.T, mode corral.Mode) *instance {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	in := &instance{
		dir:     base,
		ws:      filepath.Join(base, "agents", "main", "workspace"),
		data:    filepath.Join(base, "agents", "main", "data"),
		bin:     ToolsBinDir(base),
		secrets: filepath.Join(base, "secrets"),
		outside: filepath.Join(base, "outside"),
	}
	for _, d := range []string{in.ws, filepath.Join(in.ws, "sub"), in.data, in.bin, in.secrets, in.outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	writeFile(t, filepath.Join(in.ws, "notes.txt"), "workspace notes\n", 0o644)
	writeFile(t, filepath.Join(in.data, "config.toml"), "original\n", 0o644)
	writeFile(t, filepath.Join(in.secrets, "token.txt"), "hidden token\n", 0o600)
	writeFile(t, filepath.Join(in.bin, "hello-tool"), "#!/bin/sh\necho hello from tools bin\n", 0o755)

	cfg := WithToolsBin(corral.Config{
		Mode:          mode,
		Workspace:     in.ws,
		ReadOnlyPaths: []string{base},
		HiddenPaths:   []string{in.secrets},
		Env:           []string{"PATH=" + testPath},
	}, in.bin)
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	opts := Options{ToolsBin: in.bin, DefaultTimeout: 30 * time.Second}
	in.shell, err = NewShell(sb, opts)
	require.NoError(t, err)
	in.exec, err = NewExec(sb, opts)
	require.NoError(t, err)
	return in
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), mode))
}

// lookTestPath finds name on testPath, or skips the test.
func lookTestPath(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range filepath.SplitList(testPath) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Skip(name + " is not installed on " + testPath)
	return ""
}

// escape is one way a command might write or read where it must not. The
// ways are those an agent used to get around string filters on its
// commands: when one form was blocked it tried an equivalent.
type escape struct {
	name string
	// run performs the attempt; leak is a fresh host path in /tmp.
	run func(t *testing.T, in *instance, leak string) (*ShellOutput, error)
	// escaped reports, from the host, whether the attempt worked.
	escaped func(in *instance, leak string) bool
}

func shellEscape(name, command string, escaped func(in *instance, leak string) bool) escape {
	return escape{
		name: name,
		run: func(t *testing.T, in *instance, leak string) (*ShellOutput, error) {
			cmd := strings.NewReplacer("OUT", in.outside, "DATA", in.data, "BIN", in.bin,
				"SECRETS", in.secrets, "LEAK", leak).Replace(command)
			return in.shell.Run(context.Background(), ShellArgs{Command: cmd})
		},
		escaped: escaped,
	}
}

func execEscape(name string, program func(t *testing.T) string, args func(in *instance) []string, escaped func(in *instance, leak string) bool) escape {
	return escape{
		name: name,
		run: func(t *testing.T, in *instance, leak string) (*ShellOutput, error) {
			return in.exec.Run(context.Background(), ExecArgs{Program: program(t), Args: args(in)})
		},
		escaped: escaped,
	}
}

func exists(path func(in *instance, leak string) string) func(in *instance, leak string) bool {
	return func(in *instance, leak string) bool {
		_, err := os.Lstat(path(in, leak))
		return err == nil
	}
}

func outside(name string) func(in *instance, leak string) bool {
	return exists(func(in *instance, _ string) string { return filepath.Join(in.outside, name) })
}

func named(name string) func(*testing.T) string { return func(*testing.T) string { return name } }

func escapes() []escape {
	pyScript := "printf 'import sys\\nopen(sys.argv[1], \"w\").write(\"pwned\")\\n' > w.py && python3 w.py OUT/python.txt"
	return []escape{
		shellEscape("cp a workspace file to /tmp, read it from the host",
			"cp notes.txt LEAK", exists(func(_ *instance, leak string) string { return leak })),
		shellEscape("cat redirect outside", "cat notes.txt > OUT/cat.txt", outside("cat.txt")),
		shellEscape("find -exec", `find . -name notes.txt -exec cp {} OUT/find.txt \;`, outside("find.txt")),
		shellEscape("heredoc", "cat > OUT/heredoc.txt <<'EOF'\npwned\nEOF", outside("heredoc.txt")),
		shellEscape("script file",
			`printf '#!/bin/sh\necho pwned > "$1"\n' > w.sh && chmod +x w.sh && ./w.sh OUT/script.txt`, outside("script.txt")),
		shellEscape("python3 script file", pyScript, outside("python.txt")),
		shellEscape("perl -e", `perl -e 'open(my $f, ">", $ARGV[0]) or die "$!\n"; print $f "pwned"' OUT/perl.txt`, outside("perl.txt")),
		shellEscape("eval of a built command", `eval "$(printf 'echo pwned > %s' OUT/eval.txt)"`, outside("eval.txt")),
		shellEscape("overwrite the agent's data", "echo pwned > DATA/config.toml", func(in *instance, _ string) bool {
			b, _ := os.ReadFile(filepath.Join(in.data, "config.toml"))
			return string(b) != "original\n"
		}),
		shellEscape("plant a program in tools/bin", "cp /bin/sh BIN/planted",
			exists(func(in *instance, _ string) string { return filepath.Join(in.bin, "planted") })),
		shellEscape("copy a hidden secret into the workspace", "cp SECRETS/token.txt stolen.txt",
			exists(func(in *instance, _ string) string { return filepath.Join(in.ws, "stolen.txt") })),
		execEscape("exec cp", named("cp"),
			func(in *instance) []string { return []string{"notes.txt", filepath.Join(in.outside, "exec-cp.txt")} },
			outside("exec-cp.txt")),
		execEscape("exec find -exec", named("find"),
			func(in *instance) []string {
				return []string{".", "-name", "notes.txt", "-exec", "cp", "{}", filepath.Join(in.outside, "exec-find.txt"), ";"}
			},
			outside("exec-find.txt")),
		execEscape("exec python3 -c", func(t *testing.T) string { return lookTestPath(t, "python3") },
			func(in *instance) []string {
				return []string{"-c", "import sys; open(sys.argv[1], 'w').write('pwned')", filepath.Join(in.outside, "exec-py.txt")}
			},
			outside("exec-py.txt")),
		execEscape("exec sh -c", named("sh"),
			func(in *instance) []string {
				return []string{"-c", "echo pwned > " + filepath.Join(in.outside, "exec-sh.txt")}
			},
			outside("exec-sh.txt")),
	}
}

func TestEscapesFailInSandbox(t *testing.T) {
	lookTestPath(t, "perl")
	for _, mode := range []corral.Mode{corral.ModeEnabled, corral.ModeDisabled} {
		in := newInstance(t, mode)
		for i, e := range escapes() {
			t.Run(string(mode)+"/"+e.name, func(t *testing.T) {
				if strings.Contains(e.name, "python3") {
					lookTestPath(t, "python3")
				}
				leak := filepath.Join("/tmp", fmt.Sprintf("corral-tools-leak-%d-%d-%d", os.Getpid(), i, time.Now().UnixNano()))
				t.Cleanup(func() { os.Remove(leak) })
				out, err := e.run(t, in, leak)
				require.NoError(t, err, "the command must run in both modes")
				if insideOnly(e.name) && mode == corral.ModeDisabled && !hostTmpWritable() {
					t.Skip("the host's /tmp is not writable by this uid, so the copy cannot land there even unsandboxed")
				}
				if insideOnly(e.name) {
					require.True(t, out.Success, "the copy works inside the sandbox:\n%s", out.Format())
				}
				if mode == corral.ModeDisabled {
					require.True(t, e.escaped(in, leak), "unsandboxed, the attempt must work, or the test proves nothing:\n%s", out.Format())
					return
				}
				assert.False(t, e.escaped(in, leak), "the sandbox let it through:\n%s", out.Format())
				assert.True(t, insideOnly(e.name) || refusedByKernel(out), "failed for another reason:\n%s", out.Format())
			})
		}
	}
}

// insideOnly names the escape that works inside the sandbox and stays
// there: the copy lands in the sandbox's private /tmp.
func insideOnly(name string) bool { return strings.HasPrefix(name, "cp a workspace file to /tmp") }

func hostTmpWritable() bool {
	f, err := os.CreateTemp("/tmp", "corral-tools-probe-")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// refusedByKernel reports whether a command's errors come from the sandbox's
// mounts, not from a typo in the probe.
func refusedByKernel(out *ShellOutput) bool {
	return strings.Contains(out.Stderr, "Read-only file system") || strings.Contains(out.Stderr, "Permission denied")
}

func TestShellReportsExit(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	out, err := in.shell.Run(context.Background(), ShellArgs{Command: "echo out; echo err >&2; exit 3"})
	require.NoError(t, err)
	assert.Equal(t, 3, out.ExitCode)
	assert.False(t, out.Success)
	assert.Equal(t, "out\n", out.Stdout)
	assert.Equal(t, "err\n", out.Stderr)
	assert.Equal(t, "Exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr\n", out.Format())

	out, err = in.shell.Run(context.Background(), ShellArgs{Command: "kill -9 $$"})
	require.NoError(t, err)
	assert.Equal(t, -1, out.ExitCode)
	assert.Equal(t, "signal killed", out.Signal)
}

func TestShellWorkingDir(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	tests := []struct {
		dir     string
		want    string
		wantErr error
	}{
		{"", in.ws, nil},
		{"sub", filepath.Join(in.ws, "sub"), nil},
		{filepath.Join(in.ws, "sub"), filepath.Join(in.ws, "sub"), nil},
		{"../data", "", ErrOutsideWorkspace},
		{in.outside, "", ErrOutsideWorkspace},
		{"/", "", ErrOutsideWorkspace},
		{"missing", "", ErrNotExist},
		{"notes.txt", "", ErrNotDir},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			out, err := in.shell.Run(context.Background(), ShellArgs{Command: "pwd", WorkingDir: tt.dir})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, out)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want+"\n", out.Stdout)
		})
	}
}

func TestToolsBinFirstOnPath(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	out, err := in.shell.Run(context.Background(), ShellArgs{Command: `hello-tool && echo "$PATH"`})
	require.NoError(t, err)
	assert.Equal(t, "hello from tools bin\n"+in.bin+":"+testPath+"\n", out.Stdout)

	out, err = in.exec.Run(context.Background(), ExecArgs{Program: "hello-tool"})
	require.NoError(t, err)
	assert.Equal(t, "hello from tools bin\n", out.Stdout)
}

func TestShellTimeoutKillsTheSandbox(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	exited := heldFIFO(t, in.ws)
	start := time.Now()
	out, err := in.shell.Run(context.Background(), ShellArgs{
		Command:        "exec 3>held; echo started; (sleep 2; echo late > late.txt) & sleep 60",
		TimeoutSeconds: 1,
	})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.True(t, out.TimedOut)
	assert.Equal(t, -1, out.ExitCode)
	assert.Equal(t, "started\n", out.Stdout, "output before the timeout is kept")
	assert.Contains(t, out.Format(), "Timed out after 1s")
	exited() // every process of the command, the background one included
	assert.NoFileExists(t, filepath.Join(in.ws, "late.txt"), "a background process outlived the timeout")
}

func TestShellCancelled(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	out, err := in.shell.Run(ctx, ShellArgs{Command: "sleep 60"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Nil(t, out)
}

func TestShellOutputTruncated(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	sh, err := NewShell(in.shell.r.sb, Options{MaxOutputBytes: 1000})
	require.NoError(t, err)
	out, err := sh.Run(context.Background(), ShellArgs{
		Command: "echo BEGIN; head -c 200000 /dev/zero | tr '\\0' x; echo; echo END; head -c 5000 /dev/zero >&2",
	})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out.Stdout, "BEGIN\nxxx"))
	assert.True(t, strings.HasSuffix(out.Stdout, "xxx\nEND\n"))
	assert.Equal(t, int64(6+200000+1+4-1000), out.StdoutCut)
	assert.Contains(t, out.Stdout, truncationMarker(out.StdoutCut))
	assert.Equal(t, int64(4000), out.StderrCut)
}

func TestExecRefusesDangerousEnvBeforeRunning(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	for _, name := range []string{"LD_PRELOAD", "PYTHONPATH", "BASH_ENV"} {
		marker := filepath.Join(in.ws, "ran-"+name)
		out, err := in.exec.Run(context.Background(), ExecArgs{
			Program: "touch", Args: []string{marker},
			Env: []EnvVar{{Key: name, Value: filepath.Join(in.ws, "evil.so")}},
		})
		require.ErrorIs(t, err, ErrDangerousEnv, name)
		assert.Nil(t, out)
		assert.NoFileExists(t, marker)
	}
}

func TestExecEnvAndArgs(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	out, err := in.exec.Run(context.Background(), ExecArgs{
		Program: "sh", Args: []string{"-c", `printf '%s|%s' "$GREETING" "$1"`, "sh", "two words; $(not expanded)"},
		Env: []EnvVar{{Key: "GREETING", Value: "hi"}},
	})
	require.NoError(t, err)
	assert.Equal(t, "hi|two words; $(not expanded)", out.Stdout)
}

func TestExecNotFound(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	_, err := in.exec.Run(context.Background(), ExecArgs{Program: "no-such-program-xyz"})
	require.ErrorIs(t, err, corral.ErrNotFound)
	assert.Contains(t, err.Error(), "no-such-program-xyz")
}

func TestCommandsSeeTheWorkspace(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	out, err := in.shell.Run(context.Background(), ShellArgs{
		Command: fmt.Sprintf("cat notes.txt && echo made > made.txt && cat %s", filepath.Join(in.data, "config.toml")),
	})
	require.NoError(t, err)
	assert.True(t, out.Success, out.Format())
	assert.Equal(t, "workspace notes\noriginal\n", out.Stdout)
	assert.FileExists(t, filepath.Join(in.ws, "made.txt"))
}

func TestArgumentsRefusedBeforeRunning(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	ctx := context.Background()
	shellCases := map[string]ShellArgs{
		"command":         {Command: "  "},
		"command NUL":     {Command: "echo a\x00b"},
		"timeout_seconds": {Command: "true", TimeoutSeconds: -5},
		"working_dir NUL": {Command: "true", WorkingDir: "a\x00"},
	}
	for name, args := range shellCases {
		out, err := in.shell.Run(ctx, args)
		var ae *ArgError
		require.ErrorAs(t, err, &ae, name)
		assert.Nil(t, out, name)
	}
	execCases := map[string]ExecArgs{
		"program":     {},
		"program NUL": {Program: "ls\x00"},
		"args NUL":    {Program: "ls", Args: []string{"a", "b\x00"}},
		"env":         {Program: "ls", Env: []EnvVar{{Key: "A=B"}}},
		"timeout":     {Program: "ls", TimeoutSeconds: 1 << 40},
	}
	for name, args := range execCases {
		out, err := in.exec.Run(ctx, args)
		var ae *ArgError
		require.ErrorAs(t, err, &ae, name)
		assert.Nil(t, out, name)
	}
	_, err := in.exec.Run(ctx, ExecArgs{Program: "no-such-program-xyz"})
	assert.EqualError(t, err, "exec no-such-program-xyz: executable file not found")
}

// TestFormerlyFilteredCommandsRun runs commands the old string filters
// refused. They run now, and the secret the filters were protecting is
// still out of reach: corral keeps secret-looking variables out of the
// environment, and /proc shows only the sandbox's own processes.
func TestFormerlyFilteredCommandsRun(t *testing.T) {
	const secret = "sk-test-0123456789abcdefghijklmnopqrstuv"
	t.Setenv("CORRAL_TOOLS_TEST_API_KEY", secret)
	in := newInstance(t, corral.ModeEnabled)
	tests := []struct {
		command string
		// hostShows says the command finds the secret on the host. Other
		// processes' environments there date from before the test set it.
		hostShows bool
	}{
		{"printenv", true},
		{"env", true},
		{"set", true},
		{"export -p", true},
		{`echo "$CORRAL_TOOLS_TEST_API_KEY" ${CORRAL_TOOLS_TEST_API_KEY}`, true},
		{"echo $(printenv) `env`", true},
		{"eval 'env'", true},
		{"exec env", true},
		{"cat /proc/self/environ", true},
		{"cat < /dev/stdin; env > /dev/fd/1", true},
		{"python3 -c 'import os; print(os.environ)'", true},
		{"perl -e 'print %ENV'", true},
		{"cat /proc/*/environ", false},
		{"cat /proc/1/environ /proc/$PPID/environ", false},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			out, err := in.shell.Run(context.Background(), ShellArgs{Command: tt.command})
			require.NoError(t, err)
			assert.NotContains(t, out.Stdout+out.Stderr, secret)

			// On the host, with the caller's environment, the same command
			// finds the secret, so the check above can fail.
			res, err := UnsandboxedShell(context.Background(), tt.command, in.ws)
			require.NoError(t, err)
			if tt.hostShows {
				assert.Contains(t, res.Stdout+res.Stderr, secret)
			}
		})
	}
}

// The model is told, after the output, what the sandbox refused the
// command; a command refused nothing gets no such line.
func TestShellOutputSaysWhatWasRefused(t *testing.T) {
	in := newInstance(t, corral.ModeEnabled)
	target := filepath.Join(in.data, "config.toml")
	out, err := in.shell.Run(context.Background(), ShellArgs{Command: "echo changed > " + target})
	require.NoError(t, err)
	assert.False(t, out.Success)
	assert.Contains(t, out.Refused, "refused 1 write (read-only by --read-only ")
	assert.Contains(t, out.Format(), "--- sandbox ---\nThe sandbox refused 1 write (read-only by --read-only ")
	assert.Contains(t, out.Format(), "e.g. "+target)

	out, err = in.exec.Run(context.Background(), ExecArgs{Program: "mkdir", Args: []string{filepath.Join(in.outside, "d")}})
	require.NoError(t, err)
	assert.Contains(t, out.Refused, "refused 1 write")

	out, err = in.shell.Run(context.Background(), ShellArgs{Command: "echo fine > notes2.txt"})
	require.NoError(t, err)
	assert.True(t, out.Success)
	assert.Empty(t, out.Refused)
	assert.NotContains(t, out.Format(), "--- sandbox ---")
}
