package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// waitLimit bounds every wait for the watcher; the tests poll rather than
// sleep, so a fast machine finishes in milliseconds.
const waitLimit = 5 * time.Second

type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logRecorder) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}

func oneAgent(network, workspace string) string {
	return fmt.Sprintf("[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = %q\nworkspace = %q\n", network, workspace)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// replaceFile saves the way most editors do: write a new file, rename it
// over the old one.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	writeFile(t, tmp, content)
	require.NoError(t, os.Rename(tmp, path))
}

func startWatch(t *testing.T, path string) (*Runtime, *logRecorder) {
	t.Helper()
	logs := &logRecorder{}
	r, err := Watch(path, logs.logf)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.Close()) })
	return r, logs
}

func network(r *Runtime) corral.Network { return r.Config().Agents[0].Sandbox.Network }

func TestWatchEditInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agents.toml")
	writeFile(t, path, oneAgent("host", "ws"))
	r, logs := startWatch(t, path)
	require.Equal(t, corral.NetworkHost, network(r))
	require.Equal(t, filepath.Join(dir, "ws"), r.Config().Agents[0].Sandbox.Workspace)

	writeFile(t, path, oneAgent("none", "ws2"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkNone }, waitLimit, 10*time.Millisecond)
	assert.Equal(t, filepath.Join(dir, "ws2"), r.Config().Agents[0].Sandbox.Workspace, "relative paths follow the file")
	assert.Equal(t, 1, logs.count("config: reloaded "+path))
}

func TestWatchBadEditKeepsPrevious(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.toml")
	writeFile(t, path, oneAgent("none", "/w"))
	r, logs := startWatch(t, path)
	before := r.Config()

	writeFile(t, path, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nmode = \"sometimes\"\n")
	want := path + `:4: agents[0].sandbox.mode: "sometimes" is not a mode`
	require.Eventually(t, func() bool { return logs.count(want) == 1 }, waitLimit, 10*time.Millisecond)
	assert.Same(t, before, r.Config(), "a bad edit keeps the previous config")
	assert.Equal(t, 1, logs.count("keeping the previous config"))

	writeFile(t, path, oneAgent("host", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkHost }, waitLimit, 10*time.Millisecond)
}

func TestWatchRenameReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.toml")
	writeFile(t, path, oneAgent("host", "/w"))
	r, _ := startWatch(t, path)

	replaceFile(t, path, oneAgent("none", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkNone }, waitLimit, 10*time.Millisecond)

	// The watch outlives the inode it started with.
	replaceFile(t, path, oneAgent("host", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkHost }, waitLimit, 10*time.Millisecond)
	writeFile(t, path, oneAgent("none", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkNone }, waitLimit, 10*time.Millisecond)
}

// TestWatchSymlinkSwap follows a deployment that swaps a directory symlink
// above the file, as Kubernetes does for mounted ConfigMaps: no event ever
// names the file itself.
func TestWatchSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, v), 0o755))
	}
	writeFile(t, filepath.Join(dir, "v1", "agents.toml"), oneAgent("host", "/w"))
	writeFile(t, filepath.Join(dir, "v2", "agents.toml"), oneAgent("none", "/w"))
	require.NoError(t, os.Symlink("v1", filepath.Join(dir, "..data")))
	path := filepath.Join(dir, "agents.toml")
	require.NoError(t, os.Symlink("..data/agents.toml", path))
	r, _ := startWatch(t, path)
	require.Equal(t, corral.NetworkHost, network(r))

	require.NoError(t, os.Symlink("v2", filepath.Join(dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkNone }, waitLimit, 10*time.Millisecond)
}

// TestWatchSymlinkElsewhere edits the real file behind a symlink that lives
// in another directory.
func TestWatchSymlinkElsewhere(t *testing.T) {
	real := filepath.Join(t.TempDir(), "real.toml")
	writeFile(t, real, oneAgent("host", "/w"))
	path := filepath.Join(t.TempDir(), "agents.toml")
	require.NoError(t, os.Symlink(real, path))
	r, _ := startWatch(t, path)

	writeFile(t, real, oneAgent("none", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkNone }, waitLimit, 10*time.Millisecond)
}

func TestWatchRemovedKeepsPrevious(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.toml")
	writeFile(t, path, oneAgent("none", "/w"))
	r, logs := startWatch(t, path)
	before := r.Config()

	require.NoError(t, os.Remove(path))
	require.Eventually(t, func() bool { return logs.count(path+" is gone") == 1 }, waitLimit, 10*time.Millisecond)
	assert.Same(t, before, r.Config())

	writeFile(t, path, oneAgent("host", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkHost }, waitLimit, 10*time.Millisecond)
}

// TestWatchIgnoresOtherFiles checks that a change beside the file costs a
// read but no reload.
func TestWatchIgnoresOtherFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agents.toml")
	writeFile(t, path, oneAgent("host", "/w"))
	r, logs := startWatch(t, path)
	before := r.Config()

	writeFile(t, filepath.Join(dir, "other.log"), "noise")
	writeFile(t, path, oneAgent("none", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkNone }, waitLimit, 10*time.Millisecond)
	assert.NotSame(t, before, r.Config())
	assert.Equal(t, 1, logs.count("config: reloaded"), "the unrelated file caused no reload")
}

func TestWatchRefusesBadStart(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	writeFile(t, bad, "[[agents]]\nid = \"a\"\nsandbox.network = \"wifi\"\n")

	_, err := Watch(bad, nil)
	var ce *Error
	require.True(t, errors.As(err, &ce), "got %v", err)
	assert.Equal(t, 3, ce.Line)
	assert.Equal(t, "agents[0].sandbox.network", ce.Key)

	_, err = Watch(filepath.Join(dir, "missing.toml"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestWatchClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.toml")
	writeFile(t, path, oneAgent("host", "/w"))
	r, err := Watch(path, nil)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	select {
	case <-r.stopped:
	default:
		t.Fatal("Close returned before the watch goroutine stopped")
	}
	require.NoError(t, r.Close(), "Close is idempotent")
	assert.Equal(t, corral.NetworkHost, network(r), "Config outlives Close")
}

func TestWatchConcurrentReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.toml")
	writeFile(t, path, oneAgent("host", "/w"))
	r, _ := startWatch(t, path)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					cfg := r.Config()
					assert.Len(t, cfg.Agents, 1)
				}
			}
		})
	}
	writeFile(t, path, oneAgent("none", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkNone }, waitLimit, 10*time.Millisecond)
	close(stop)
	wg.Wait()
}

// Every config a Runtime hands out names the file, so that sandboxes built
// from it keep the file read-only; a parsed document names none.
func TestWatchedFileIsAPolicyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.toml")
	writeFile(t, path, oneAgent("host", "/w"))
	r, _ := startWatch(t, path)
	assert.Equal(t, []string{path}, r.Config().Agents[0].Sandbox.CorralConfig().PolicyFiles)

	replaceFile(t, path, oneAgent("none", "/w"))
	require.Eventually(t, func() bool { return network(r) == corral.NetworkNone }, waitLimit, 10*time.Millisecond)
	assert.Equal(t, []string{path}, r.Config().Agents[0].Sandbox.CorralConfig().PolicyFiles, "after a reload too")

	cfg, err := Parse(strings.NewReader(oneAgent("host", "/w")), path)
	require.NoError(t, err)
	assert.Empty(t, cfg.Agents[0].Sandbox.CorralConfig().PolicyFiles)
}

func TestOnReloadAppliesNetworkLists(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agents.toml")
	doc := func(domain string) string {
		return oneAgent("allow", "ws") + fmt.Sprintf("allowed_domains = [%q]\n", domain)
	}
	writeFile(t, path, doc("a.example"))
	r, _ := startWatch(t, path)
	got := make(chan []string, 4)
	r.OnReload(func(c *Config) { got <- c.Agents[0].Sandbox.AllowedDomains })
	replaceFile(t, path, doc("b.example"))
	select {
	case d := <-got:
		assert.Equal(t, []string{"b.example"}, d)
	case <-time.After(waitLimit):
		t.Fatal("no reload reported")
	}
}

func TestApplyNetworkNeedsAllow(t *testing.T) {
	err := Sandbox{Network: corral.NetworkHost}.ApplyNetwork(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start a new one")
}
