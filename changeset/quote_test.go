package changeset

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"README.md", "README.md"},
		{"dir/sub file", "dir/sub file"},
		{"-rf", "-rf"},
		{"héllo/日本", "héllo/日本"},
		{"x\nM README.md", `"x\nM README.md"`},
		{"a\rb", `"a\rb"`},
		{"tab\there", `"tab\there"`},
		{"\x1b[2Kname", `"\033[2Kname"`},
		{"bad\xffutf8", `"bad\377utf8"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash`, `"back\\slash"`},
		{"del\x7f", `"del\177"`},
		{"csi\u009b", `"csi\302\233"`},
		{"rtl\u202egnp.exe", `"rtl\342\200\256gnp.exe"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := Quote(tt.in)
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "\n")
			assert.NotContains(t, got, "\x1b")
		})
	}
}

func TestVisibleLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ttabbed text", "plain\ttabbed text"},
		{"héllo", "héllo"},
		{"\x1b[2K\x1b[1Aok", "^[[2K^[[1Aok"},
		{"evil\rgood", "evil^Mgood"},
		{"\x1b]8;;http://x\x07click\x1b]8;;\x07", "^[]8;;http://x^Gclick^[]8;;^G"},
		{"bell\x07 del\x7f", "bell^G del^?"},
		{"c1\u009b31m", `c1\u009b31m`},
		{"bad\xfe", `bad\xfe`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, VisibleLine(tt.in))
		})
	}
}

func TestScanContent(t *testing.T) {
	text := strings.Repeat("just some text\n", 10000) // far past any first-bytes probe
	tests := []struct {
		name        string
		content     string
		binary, ctl bool
	}{
		{"text", text, false, false},
		{"crlf", strings.ReplaceAll(text, "\n", "\r\n"), false, false},
		{"utf-8", "héllo 日本\n", false, false},
		{"nul late", text + "\x00", true, false},
		{"nul on a later line", "#!/bin/sh\necho hi\n" + text + "x\x00y\n", true, false},
		{"escape late", text + "\x1b[2K\n", false, true},
		{"lone cr late", text + "evil\rgood\n", false, true},
		{"invalid utf-8 late", text + "\xff\n", false, true},
		{"bidi override", text + "\u202e\n", false, true},
		{"cr at the end", text + "x\r", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := scanContent(strings.NewReader(tt.content))
			require.NoError(t, err)
			assert.Equal(t, Content{Binary: tt.binary, Unprintable: tt.ctl}, c)
		})
	}
}

// hostile are names and contents a sandboxed command may choose to mislead
// whoever reviews its changes.
var hostile = tree{
	"x\nM README.md (5 bytes, was 5 bytes)": "forged\n",
	"cr\rM README.md":                       "x\n",
	"esc\x1b[2K\x1b[1A":                     "x\n",
	"tab\tname":                             "x\n",
	"bad\xffname":                           "x\n",
	"-rf":                                   "x\n",
	"link":                                  "-> \nA evil",
	"a.txt":                                 "hello\n\x1b[2K\x1b[1Aall good\nevil\rgood\n\x1b]8;;http://evil.example\x07docs\x1b]8;;\x07\n",
}

func TestDiffHostile(t *testing.T) {
	f := newFixture(t, tree{"a.txt": "hello\n"})
	for name, content := range hostile {
		f.write(t, name, content)
	}
	var out bytes.Buffer
	require.NoError(t, f.cs.Diff(&out))
	diff := out.String()
	for _, line := range strings.Split(diff, "\n") {
		assert.False(t, strings.HasPrefix(line, "M README.md"), "forged line %q", line)
		assert.False(t, strings.HasPrefix(line, "A evil"), "forged line %q", line)
		assert.NotContains(t, line, "\x1b")
		assert.NotContains(t, line, "\r")
		assert.NotContains(t, line, "\x07")
	}
	for _, want := range []string{
		`diff --git "a/x\nM README.md (5 bytes, was 5 bytes)" "b/x\nM README.md (5 bytes, was 5 bytes)"`,
		`+++ "b/esc\033[2K\033[1A"`,
		`+++ "b/tab\tname"`,
		`+++ "b/bad\377name"`,
		"+++ b/-rf",
		"+^[[2K^[[1Aall good",
		"+evil^Mgood",
		"+^[]8;;http://evil.example^Gdocs^[]8;;^G",
		"+\"\\nA evil\"", // the symlink's target, as its content
	} {
		assert.Contains(t, diff, want)
	}
	assert.NotContains(t, diff, "+\nA evil")
}

func TestListHostile(t *testing.T) {
	f := newFixture(t, tree{"a.txt": "hello\n", "run": "#!/bin/sh\n"})
	for name, content := range hostile {
		f.write(t, name, content)
	}
	f.write(t, "late.bin", strings.Repeat("text\n", 5000)+"\x00")
	f.write(t, "tool", "#!/bin/sh\n")
	f.chmod(t, "tool", 0o755)
	f.write(t, "run", "#!/bin/sh\n")
	f.chmod(t, "run", 0o755)
	changes, err := f.cs.List()
	require.NoError(t, err)
	byName := map[string]Change{}
	for _, ch := range changes {
		byName[ch.Path] = ch
		assert.NotContains(t, ch.String(), "\n")
		assert.NotContains(t, ch.String(), "\r")
		assert.NotContains(t, ch.String(), "\x1b")
	}
	// Names stay exact in the values, and in JSON, which escapes them;
	// JSON strings cannot hold bytes that are not UTF-8.
	for name := range hostile {
		require.Contains(t, byName, name)
	}
	delete(byName, "bad\xffname")
	changes = slices.DeleteFunc(changes, func(ch Change) bool { return !utf8.ValidString(ch.Path) })
	assert.Equal(t, `A "x\nM README.md (5 bytes, was 5 bytes)"`, byName["x\nM README.md (5 bytes, was 5 bytes)"].String())
	assert.Equal(t, "A -rf", byName["-rf"].String())
	b, err := json.Marshal(changes)
	require.NoError(t, err)
	var back []Change
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, changes, back)

	assert.True(t, byName["late.bin"].Binary)
	assert.True(t, byName["a.txt"].Unprintable)
	assert.False(t, byName["a.txt"].Binary)
	assert.True(t, byName["tool"].Executable(), "a new executable")
	assert.True(t, byName["run"].Executable(), "a file made executable")
	assert.False(t, byName["-rf"].Executable())
}

func TestExecutable(t *testing.T) {
	exe, plain := Perm(0o755), Perm(0o644)
	tests := []struct {
		name string
		ch   Change
		want bool
	}{
		{"new executable", Change{Status: Added, Type: File, Mode: exe}, true},
		{"new plain", Change{Status: Added, Type: File, Mode: plain}, false},
		{"made executable", Change{Status: Modified, Type: File, Mode: exe, OldType: File, OldMode: plain}, true},
		{"was executable", Change{Status: Modified, Type: File, Mode: exe, OldType: File, OldMode: exe}, false},
		{"symlink replaced by executable", Change{Status: Replaced, Type: File, Mode: exe, OldType: Symlink, OldMode: Perm(fs.ModePerm)}, true},
		{"directory", Change{Status: Added, Type: Dir, Mode: exe}, false},
		{"deleted", Change{Status: Deleted, OldType: File, OldMode: plain}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.ch.Executable()) })
	}
}

// The same hostile file read raw shows what the quoting prevents: the
// forged line and the escape sequences reach the output.
func TestHostileRawControl(t *testing.T) {
	dir := t.TempDir()
	name := "x\nM README.md (5 bytes, was 5 bytes)"
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	raw := "A " + entries[0].Name()
	assert.Contains(t, strings.Split(raw, "\n"), "M README.md (5 bytes, was 5 bytes)")
}
