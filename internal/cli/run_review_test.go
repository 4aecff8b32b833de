package cli

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withStdio feeds input to os.Stdin and collects os.Stderr while fn runs.
func withStdio(t *testing.T, input string, fn func()) string {
	t.Helper()
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	errR, errW, err := os.Pipe()
	require.NoError(t, err)
	oldIn, oldErr := os.Stdin, os.Stderr
	os.Stdin, os.Stderr = inR, errW
	defer func() { os.Stdin, os.Stderr = oldIn, oldErr }()
	go func() {
		io.WriteString(inW, input)
		inW.Close()
	}()
	collected := make(chan string)
	go func() {
		b, _ := io.ReadAll(errR)
		collected <- string(b)
	}()
	fn()
	errW.Close()
	inR.Close()
	return <-collected
}

func TestRunReview(t *testing.T) {
	needsSandbox(t)
	tests := []struct {
		name, input string
		script      string
		code        int
		applied     bool
	}{
		{"apply", "a\n", "echo changed > f", 0, true},
		{"discard keeps the status", "d\n", "echo changed > f; exit 3", 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(ws, "f"), []byte("orig\n"), 0o644))
			dir := filepath.Join(t.TempDir(), "cs")
			var code int
			stderr := withStdio(t, tt.input, func() {
				code = run([]string{"run", "--workspace", ws, "--changeset", dir, "--review", "--", "sh", "-c", tt.script})
			})
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, "M f (8 bytes, was 5 bytes)")
			b, err := os.ReadFile(filepath.Join(ws, "f"))
			require.NoError(t, err)
			assert.Equal(t, tt.applied, string(b) == "changed\n")
			_, err = os.Stat(dir)
			assert.ErrorIs(t, err, os.ErrNotExist, "applied or discarded, the changeset is gone")
		})
	}
}

func TestRunReviewSkipsWhenNotStarted(t *testing.T) {
	needsSandbox(t)
	ws := t.TempDir()
	dir := filepath.Join(t.TempDir(), "cs")
	var code int
	stderr := withStdio(t, "", func() {
		code = run([]string{"run", "--workspace", ws, "--changeset", dir, "--review", "--", "no-such-command-here"})
	})
	assert.Equal(t, exitNotFound, code)
	assert.NotContains(t, stderr, reviewPrompt)
	_, err := os.Stat(dir)
	assert.NoError(t, err, "a command that never ran leaves the changeset alone")
}

// TestRunReviewConfigChangeset reviews a changeset named in the --config
// file rather than on the command line.
func TestRunReviewConfigChangeset(t *testing.T) {
	needsSandbox(t)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "f"), []byte("orig\n"), 0o644))
	dir := filepath.Join(t.TempDir(), "cs")
	path := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nchangeset = \""+dir+"\"\n")
	var code int
	stderr := withStdio(t, "a\n", func() {
		code = run([]string{"run", "--config", path, "--workspace", ws, "--review", "--", "sh", "-c", "echo changed > f"})
	})
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "M f (8 bytes, was 5 bytes)")
	b, err := os.ReadFile(filepath.Join(ws, "f"))
	require.NoError(t, err)
	assert.Equal(t, "changed\n", string(b), "applied from the review")
}
