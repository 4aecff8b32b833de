package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReview(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		host      func(t *testing.T, ws string)
		applied   bool // a.txt has the new content
		kept      bool // the changeset directory is still there
		saved     string
		wantInOut []string
	}{
		{name: "enter discards", input: "\n", wantInOut: []string{"changes discarded"}},
		{name: "end of input discards", input: "", wantInOut: []string{"changes discarded"}},
		{name: "d discards", input: "d\n", wantInOut: []string{"changes discarded"}},
		{name: "review then discard", input: "r\nd\n", wantInOut: []string{"+world", "changes discarded"}},
		{name: "unknown answer asks again", input: "x\nD\n", wantInOut: []string{"answer r, a, s or d", "changes discarded"}},
		{name: "apply", input: "a\n", applied: true, wantInOut: []string{"applied 3 change(s)"}},
		{name: "conflict, then discard", input: "a\nd\n", host: func(t *testing.T, ws string) {
			require.NoError(t, os.WriteFile(filepath.Join(ws, "old"), []byte("host\n"), 0o644))
		}, wantInOut: []string{"old (changed on the host)", "changes discarded"}},
		{name: "save", input: "s\nout.tar\n", kept: true, saved: "out.tar", wantInOut: []string{"saved to out.tar"}},
		{name: "save to the default name", input: "s\n\n", kept: true, saved: "cs.tar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, dir := pending(t)
			if tt.host != nil {
				tt.host(t, ws)
			}
			t.Chdir(t.TempDir())
			var out bytes.Buffer
			require.NoError(t, review(strings.NewReader(tt.input), &out, dir))
			text := out.String()
			assert.Contains(t, text, "3 change(s) to "+ws)
			assert.Contains(t, text, "  M a.txt (12 bytes, was 6 bytes)\n")
			assert.Contains(t, text, reviewPrompt)
			for _, w := range tt.wantInOut {
				assert.Contains(t, text, w)
			}
			b, err := os.ReadFile(filepath.Join(ws, "a.txt"))
			require.NoError(t, err)
			assert.Equal(t, tt.applied, string(b) == "hello\nworld\n")
			_, err = os.Stat(dir)
			assert.Equal(t, tt.kept, err == nil)
			if tt.saved != "" {
				fi, err := os.Stat(tt.saved)
				require.NoError(t, err)
				assert.NotZero(t, fi.Size())
			}
		})
	}
}

func TestReviewNoChanges(t *testing.T) {
	ws, dir := pending(t)
	_, _, code := corralCmd(t, "", "changes", "apply", dir)
	require.Equal(t, 0, code)
	var out bytes.Buffer
	require.NoError(t, review(strings.NewReader(""), &out, dir))
	assert.Equal(t, "corral: no changes to "+ws+"\n", out.String())
}

func TestReviewRoots(t *testing.T) {
	ws, extra, dir := pendingRoots(t)
	var out bytes.Buffer
	require.NoError(t, review(strings.NewReader("a\n"), &out, dir))
	assert.Contains(t, out.String(), "corral: 2 change(s) to "+ws+", "+extra+":\n  "+ws+":\n    A new (2 bytes)\n  "+extra+":\n    M a.txt")
	assert.Contains(t, out.String(), "applied 2 change(s)")
	b, err := os.ReadFile(filepath.Join(extra, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\nworld\n", string(b))
	_, err = os.Stat(filepath.Join(ws, "new"))
	assert.NoError(t, err)
}
