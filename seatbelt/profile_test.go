package seatbelt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/sbplcheck"
)

// staticStrings are the string literals of a profile that holds no
// configured path beyond the workspace: the generator's own constants.
func staticStrings(t *testing.T) []string {
	p, err := Generate(Input{Workspace: "/w", TempDir: "/t", NetworkNone: false})
	require.NoError(t, err)
	q, err := Generate(Input{Workspace: "/w", TempDir: "/t", NetworkNone: true})
	require.NoError(t, err)
	return append(literals(t, p), literals(t, q)...)
}

// literals returns the strings of p's text that are not parameter names.
func literals(t *testing.T, p *Profile) []string {
	forms, err := sbplcheck.Parse(p.Text)
	require.NoError(t, err)
	refs, err := sbplcheck.ParamRefs(forms)
	require.NoError(t, err)
	var out []string
	for _, s := range sbplcheck.Strings(forms) {
		if !slices.Contains(refs, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestNoPathInProfileText proves that configured paths reach the profile
// only as parameters: no parameter value occurs in the text, and every
// string literal in it is one of the generator's constants.
func TestNoPathInProfileText(t *testing.T) {
	static := staticStrings(t)
	for _, tt := range goldenInputs {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Generate(tt.in)
			require.NoError(t, err)
			require.NotEmpty(t, p.Params)
			for _, prm := range p.Params {
				assert.NotContains(t, p.Text, prm.Value, "parameter %s", prm.Name)
			}
			for _, s := range literals(t, p) {
				assert.Contains(t, static, s, "string literal not from the generator")
			}
		})
	}
}

// TestTextDependsOnlyOnShape renames every path component and checks that
// the text is unchanged: only the parameter values differ.
func TestTextDependsOnlyOnShape(t *testing.T) {
	rename := strings.NewReplacer("Users", "Benutzer", "dev", "x y", "agent", `a"g(e)nt`,
		"workspace", `w\s`, "data", "d", ".ssh", ".secret", ".env", ".e")
	for _, tt := range goldenInputs {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Workspace = rename.Replace(in.Workspace)
			in.Writable = replaceAll(rename, in.Writable)
			in.ReadOnly = replaceAll(rename, in.ReadOnly)
			in.Hidden = replaceAll(rename, in.Hidden)
			a, err := Generate(tt.in)
			require.NoError(t, err)
			b, err := Generate(in)
			require.NoError(t, err)
			assert.Equal(t, a.Text, b.Text)
			assert.Equal(t, paramNames(a), paramNames(b))
		})
	}
}

func replaceAll(r *strings.Replacer, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = r.Replace(p)
	}
	return out
}

// TestMostSpecificRuleLast checks that every rule comes after the rules of
// the paths that contain its path, since in SBPL the last match wins.
func TestMostSpecificRuleLast(t *testing.T) {
	p, err := Generate(Input{
		Workspace: "/w",
		ReadOnly:  []string{"/w/ro"},
		Writable:  []string{"/w/ro/rw"},
		Hidden:    []string{"/w/ro/rw/secret", "/w/ro/rw/x/deeper"},
		Protected: []string{".git/hooks"},
	})
	require.NoError(t, err)
	pos := func(name string) int {
		i := strings.Index(p.Text, "(subpath (param \""+name+"\"))")
		require.GreaterOrEqual(t, i, 0, name)
		return i
	}
	chains := [][]string{
		{"WORKSPACE", "READ_ONLY_0", "WRITABLE_0", "HIDDEN_0"},
		{"WORKSPACE", "READ_ONLY_0", "WRITABLE_0", "HIDDEN_1"},
		{"WORKSPACE", "READ_ONLY_0", "WRITABLE_0", "PROTECTED_1"},
		{"WORKSPACE", "PROTECTED_0"},
	}
	for _, chain := range chains {
		for i := 1; i < len(chain); i++ {
			assert.Greater(t, pos(chain[i]), pos(chain[i-1]), "%s must come after %s, which contains it", chain[i], chain[i-1])
		}
	}
	assert.Equal(t, "/w/ro/rw/.git/hooks", value(p, "PROTECTED_1"))
}

// TestPins checks that the roots and every directory between a root and a
// stricter path inside it are pinned, and nothing outside the roots.
func TestPins(t *testing.T) {
	p, err := Generate(Input{
		Workspace: "/home/w",
		Writable:  []string{"/data/cache"},
		ReadOnly:  []string{"/home/w/a/b/ro", "/etc/outside"},
		Hidden:    []string{"/home/w/c/secret", "/home/.ssh"},
		Protected: []string{".git/hooks"},
		TempDir:   "/private/tmp/t",
	})
	require.NoError(t, err)
	pinned := pinnedPaths(t, p)
	assert.ElementsMatch(t, []string{
		"/home/w", "/data/cache", "/private/tmp/t",
		"/home/w/a/b", "/home/w/a", "/home/w/c", "/home/w/.git", "/data/cache/.git",
	}, pinned)
}

func pinnedPaths(t *testing.T, p *Profile) []string {
	start := strings.Index(p.Text, "(deny file-write-unlink")
	require.GreaterOrEqual(t, start, 0)
	forms, err := sbplcheck.Parse(p.Text[start:])
	require.NoError(t, err)
	refs, err := sbplcheck.ParamRefs(forms[:1])
	require.NoError(t, err)
	var out []string
	for _, name := range refs {
		out = append(out, value(p, name))
	}
	return out
}

func value(p *Profile, name string) string {
	for _, prm := range p.Params {
		if prm.Name == name {
			return prm.Value
		}
	}
	return ""
}

func TestNetworkModes(t *testing.T) {
	host, err := Generate(Input{Workspace: "/w", TempDir: "/t"})
	require.NoError(t, err)
	none, err := Generate(Input{Workspace: "/w", TempDir: "/t", NetworkNone: true})
	require.NoError(t, err)
	assert.Contains(t, host.Text, `(remote ip "*:*")`)
	assert.Contains(t, host.Text, "mDNSResponder")
	assert.NotContains(t, none.Text, "(remote ip")
	assert.NotContains(t, none.Text, "(local ip")
	assert.NotContains(t, none.Text, "mDNSResponder")
	assert.Contains(t, none.Text, "(allow system-socket (socket-domain AF_UNIX))")
	for _, p := range []*Profile{host, none} {
		assert.Contains(t, p.Text, `(remote unix-socket (subpath (param "TMPDIR")))`)
		assert.NotContains(t, p.Text, "(allow network*)")
	}
}

func TestCanonical(t *testing.T) {
	tests := map[string]string{
		"/tmp":            "/private/tmp",
		"/tmp/x":          "/private/tmp/x",
		"/var/folders/ab": "/private/var/folders/ab",
		"/etc/hosts":      "/private/etc/hosts",
		"/tmpfoo":         "/tmpfoo",
		"/private/tmp/x":  "/private/tmp/x",
		"/Users/x/tmp":    "/Users/x/tmp",
	}
	for in, want := range tests {
		assert.Equal(t, want, Canonical(in), in)
	}
}

func TestGenerateRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"no workspace", Input{}, "Workspace: required"},
		{"relative workspace", Input{Workspace: "w"}, "not an absolute path"},
		{"unclean writable", Input{Workspace: "/w", Writable: []string{"/a/../b"}}, "not a clean path"},
		{"trailing slash", Input{Workspace: "/w/"}, "not a clean path"},
		{"NUL", Input{Workspace: "/w", ReadOnly: []string{"/a\x00b"}}, "NUL"},
		{"empty hidden", Input{Workspace: "/w", Hidden: []string{""}}, "empty path"},
		{"relative temp", Input{Workspace: "/w", TempDir: "t"}, "TempDir"},
		{"hidden root", Input{Workspace: "/w", Hidden: []string{"/"}}, "cannot hide the root"},
		{"hidden workspace", Input{Workspace: "/w/x", Hidden: []string{"/w"}}, "contains /w/x"},
		{"hidden read-only", Input{Workspace: "/w", ReadOnly: []string{"/h/r"}, Hidden: []string{"/h"}}, "contains /h/r"},
		{"absolute protected", Input{Workspace: "/w", Protected: []string{"/etc"}}, "Protected"},
		{"escaping protected", Input{Workspace: "/w", Protected: []string{"../x"}}, "Protected"},
		{"bad located path", Input{Workspace: "/w", Protected: []string{"x"},
			Locate: func(string) []string { return []string{"rel"} }}, "not an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(tt.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestCommand(t *testing.T) {
	p, err := Generate(Input{Workspace: "/w x", Writable: []string{"/a=b"}})
	require.NoError(t, err)
	args := p.Command("/bin/sh", "-c", "echo hi")
	want := []string{"-p", p.Text, "-DWORKSPACE=/w x", "-DWRITABLE_0=/a=b", "--", "/bin/sh", "-c", "echo hi"}
	assert.Equal(t, want, args)
}

// TestSandboxExecPath pins the runner to its absolute path: looked up in
// PATH, a command could put its own "sandbox-exec" first.
func TestSandboxExecPath(t *testing.T) {
	assert.Equal(t, "/usr/bin/sandbox-exec", SandboxExec)
	assert.True(t, filepath.IsAbs(SandboxExec))
}

func TestShellQuote(t *testing.T) {
	tests := map[string]string{
		"/plain/path-1.2": "/plain/path-1.2",
		"":                "''",
		"a b":             "'a b'",
		"it's":            `'it'\''s'`,
		"a\nb's\\":        `$'a\nb\'s\\'`,
		"bell\a":          `$'bell\x07'`,
	}
	for in, want := range tests {
		assert.Equal(t, want, shellQuote(in), "%q", in)
	}
}

func TestLocateProtected(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	mk := func(p string) string {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(full, 0o755))
		return full
	}
	ws := mk("ws")
	mk("ws/.git/hooks")
	mk("elsewhere/real")
	require.NoError(t, os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(ws, ".vscode")))
	require.NoError(t, os.Symlink(filepath.Join(root, "elsewhere/rc"), filepath.Join(ws, ".bashrc")))
	require.NoError(t, os.Symlink("../elsewhere/missing/rc", filepath.Join(ws, ".zshrc")))
	tests := []struct {
		name string
		want []string
	}{
		{".git/hooks", []string{ws + "/.git/hooks"}},
		{".git/config", []string{ws + "/.git/config"}},
		{".profile", []string{ws + "/.profile"}},
		{".idea/workspace.xml", nil},
		{".vscode/tasks.json", []string{ws + "/.vscode/tasks.json", root + "/elsewhere/tasks.json"}},
		{".bashrc", []string{ws + "/.bashrc", root + "/elsewhere/rc"}},
		{".zshrc", []string{ws + "/.zshrc", root + "/elsewhere/missing/rc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, LocateProtected(filepath.Join(ws, tt.name)))
		})
	}
}

func TestLocateFeedsGenerate(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(root, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	p, err := Generate(Input{Workspace: ws, Protected: []string{".git/hooks", ".idea/workspace.xml", ".envrc"}, Locate: LocateProtected})
	require.NoError(t, err)
	var protected []string
	for _, prm := range p.Params {
		if strings.HasPrefix(prm.Name, "PROTECTED_") {
			protected = append(protected, prm.Value)
		}
	}
	assert.Equal(t, []string{Canonical(ws + "/.git/hooks"), Canonical(ws + "/.envrc")}, protected)
}

func TestNetworkViaProxy(t *testing.T) {
	p, err := Generate(Input{Workspace: "/w", TempDir: "/t", ProxyPorts: []int{4001, 4002}})
	require.NoError(t, err)
	require.NoError(t, sbplcheck.Check(p.Text, paramNames(p)))
	assert.Contains(t, p.Text, `(allow network-outbound (remote ip "localhost:4001"))`)
	assert.Contains(t, p.Text, `(allow network-outbound (remote ip "localhost:4002"))`)
	assert.NotContains(t, p.Text, `"*:*"`, "no other host or port")
	assert.NotContains(t, p.Text, "(local ip", "no server on the host's interfaces")
	assert.NotContains(t, p.Text, "mDNSResponder", "names are the proxy's to resolve")
	none, err := Generate(Input{Workspace: "/w", TempDir: "/t", NetworkNone: true, ProxyPorts: []int{4001}})
	require.NoError(t, err)
	assert.NotContains(t, none.Text, "(remote ip", "NetworkNone wins")
}
