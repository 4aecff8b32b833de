package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/corralhq/corral/internal/flock"
)

// Entry is one persistent sandbox in the registry.
type Entry struct {
	// Key is the scope key that names the sandbox; Slug the name of its
	// state directory, derived from Key.
	Key  string `json:"key"`
	Slug string `json:"slug"`
	// Agent is the id of the agent that last resolved it ("" for a
	// `corral run --scope`).
	Agent string `json:"agent,omitempty"`
	// Kind is KindBrowser for the browser of a scope (`corral browser
	// --scope`), "" for a sandbox.
	Kind     string    `json:"kind,omitempty"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	// ConfigHash is the hash of the configuration its state was made
	// under; "" after a recreate, until the next use.
	ConfigHash string `json:"config_hash"`
	// Stale says the configuration has changed since, while the sandbox
	// was in use: it is recreated once it has been idle long enough.
	Stale bool `json:"stale,omitempty"`
}

// registryDoc is the registry file.
type registryDoc struct {
	Version   int       `json:"version"`
	LastPrune time.Time `json:"last_prune,omitzero"`
	Sandboxes []Entry   `json:"sandboxes"`
}

// Registry is the JSON file that records the persistent sandboxes of a
// state directory. Every change happens under an exclusive lock on a file
// beside it, is written to a temporary file and renamed into place: other
// corral processes see the file whole, before or after a change, and two
// changes never interleave.
type Registry struct {
	path string
}

// OpenRegistry returns the registry kept at path. The file is created on
// the first change.
func OpenRegistry(path string) *Registry { return &Registry{path: path} }

// Path returns the registry file's path.
func (r *Registry) Path() string { return r.path }

// List returns the entries, sorted by key.
func (r *Registry) List() ([]Entry, error) {
	var out []Entry
	err := r.update(func(d *registryDoc) (bool, error) {
		out = slices.Clone(d.Sandboxes)
		return false, nil
	})
	return out, err
}

// Update runs fn on the entries under the registry's lock and writes back
// what it returns when it reports a change.
func (r *Registry) Update(fn func(entries []Entry) ([]Entry, bool, error)) error {
	return r.update(func(d *registryDoc) (bool, error) {
		es, changed, err := fn(d.Sandboxes)
		if changed {
			d.Sandboxes = es
		}
		return changed, err
	})
}

func (r *Registry) update(fn func(*registryDoc) (bool, error)) error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	unlock, err := flock.Lock(r.path + ".lock")
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	defer unlock()
	d, err := r.read()
	if err != nil {
		return err
	}
	changed, err := fn(d)
	if err != nil || !changed {
		return err
	}
	slices.SortFunc(d.Sandboxes, func(a, b Entry) int { return compare(a.Key, b.Key) })
	return r.write(d)
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (r *Registry) read() (*registryDoc, error) {
	d := &registryDoc{Version: 1}
	data, err := os.ReadFile(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	if err := json.Unmarshal(data, d); err != nil {
		return nil, fmt.Errorf("registry %s: %w", r.path, err)
	}
	return d, nil
}

// write replaces the file whole: a temporary file in the same directory,
// synced, renamed over it.
func (r *Registry) write(d *registryDoc) error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.path), ".registry-*")
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("registry: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("registry: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if err := os.Rename(tmp.Name(), r.path); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	return nil
}

// find returns the index of the entry with key, or -1.
func find(es []Entry, key string) int {
	return slices.IndexFunc(es, func(e Entry) bool { return e.Key == key })
}
