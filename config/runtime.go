package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// settleDelay is how long a change to the directory is left to finish
// before the file is read: an editor's truncate-and-write or a write in
// several pieces then arrives whole.
const settleDelay = 100 * time.Millisecond

// Runtime holds the current Config of one file and replaces it, whole, when
// the file changes. Readers call [Runtime.Config] on every use and never see
// a half-updated value; a changed pointer means the file changed.
type Runtime struct {
	file    string
	current atomic.Pointer[Config]
	logf    func(format string, args ...any)
	watcher *fsnotify.Watcher
	settle  time.Duration

	done      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	closeErr  error

	hooksMu sync.Mutex
	hooks   []func(*Config)

	// Only the watch goroutine touches these.
	lastData   []byte // what the file held at the last attempt
	lastReport string // the last failure to read it, said once
}

// Watch loads the config file at path and keeps it current until Close.
//
// The directory is watched rather than the file, so a file replaced by
// rename (as most editors save, and as configuration managers deploy) is
// still seen; so is the directory of the real file when path is a symlink. When an edit does not parse or validate, the previous Config
// stays in place and logf says why; a file that disappears keeps the
// previous Config too. logf also reports each successful reload. A nil logf
// discards the messages.
func Watch(path string, logf func(format string, args ...any)) (*Runtime, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("watch config %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	// The absolute name anchors relative paths on every reload, even if
	// the program changes directory meanwhile.
	cfg, err := parse(data, abs)
	if err != nil {
		return nil, err
	}
	fromFile(cfg, abs)
	w, err := watchDirs(abs)
	if err != nil {
		return nil, fmt.Errorf("watch config %s: %w", path, err)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	r := &Runtime{file: abs, logf: logf, watcher: w, settle: settleDelay,
		done: make(chan struct{}), stopped: make(chan struct{}), lastData: data}
	r.current.Store(cfg)
	go r.watch()
	return r, nil
}

// watchDirs watches the directory holding file and, when file is a symlink
// into another directory, that one too: edits made to the real file happen
// there.
func watchDirs(file string) (*fsnotify.Watcher, error) {
	dirs := []string{filepath.Dir(file)}
	if real, err := filepath.EvalSymlinks(file); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return nil, err
		}
	}
	return w, nil
}

// Config returns the current configuration. Treat it as read-only.
func (r *Runtime) Config() *Config { return r.current.Load() }

// OnReload registers fn to be called with every Config a reload stores,
// after it is stored, on the goroutine that watches the file. A program
// that keeps sandboxes running across reloads passes on what can change
// in them, such as the network lists ([Sandbox.ApplyNetwork]).
func (r *Runtime) OnReload(fn func(*Config)) {
	r.hooksMu.Lock()
	defer r.hooksMu.Unlock()
	r.hooks = append(r.hooks, fn)
}

// Close stops watching. Config keeps returning the last value.
func (r *Runtime) Close() error {
	r.closeOnce.Do(func() {
		close(r.done)
		<-r.stopped
		r.closeErr = r.watcher.Close()
	})
	return r.closeErr
}

// watch schedules a check after any change in the directory. Changes to
// other files cost one read of the config file, which is compared with what
// was seen last; reacting to every name is what catches a symlink swapped
// above the file, as Kubernetes does with mounted ConfigMaps.
func (r *Runtime) watch() {
	defer close(r.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	pending := false
	for {
		select {
		case <-r.done:
			timer.Stop()
			return
		case _, ok := <-r.watcher.Events:
			if !ok {
				return
			}
			// A first change starts the wait and later ones ride along:
			// restarting it on each would starve a busy directory.
			if !pending {
				pending = true
				timer.Reset(r.settle)
			}
		case err, ok := <-r.watcher.Errors:
			if !ok {
				return
			}
			r.logf("config: watching %s: %v", r.file, err)
		case <-timer.C:
			pending = false
			r.check()
		}
	}
}

// check reloads the file when its content changed since the last attempt.
func (r *Runtime) check() {
	data, err := os.ReadFile(r.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.reportOnce(fmt.Sprintf("config: %s is gone; keeping the previous config", r.file))
		return
	case err != nil:
		r.reportOnce(fmt.Sprintf("config: %v; keeping the previous config", err))
		return
	}
	r.lastReport = ""
	if bytes.Equal(data, r.lastData) {
		return
	}
	r.lastData = data
	cfg, err := parse(data, r.file)
	if err != nil {
		r.logf("config: %v; keeping the previous config", err)
		return
	}
	r.current.Store(fromFile(cfg, r.file))
	r.logf("config: reloaded %s (%d agents)", r.file, len(cfg.Agents))
	r.hooksMu.Lock()
	hooks := slices.Clone(r.hooks)
	r.hooksMu.Unlock()
	for _, fn := range hooks {
		fn(cfg)
	}
}

// reportOnce logs msg unless it is what the last check said: every change in
// the directory would otherwise repeat it.
func (r *Runtime) reportOnce(msg string) {
	if msg != r.lastReport {
		r.lastReport = msg
		r.logf("%s", msg)
	}
}
