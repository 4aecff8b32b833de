// Package flock holds exclusive advisory locks on files, for state shared
// between corral processes: a persistent sandbox's home, the registry of
// persistent sandboxes. A lock is released when its file is closed,
// including when the process dies.
package flock

import (
	"fmt"
	"os"
)

// Lock opens (creating it when missing) the file at path and waits for an
// exclusive lock on it. The returned function releases it. A directory may
// be locked too.
func Lock(path string) (unlock func(), err error) {
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

func open(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return os.Open(path)
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// TryLock is Lock without waiting: ok is false when another holder has
// the lock.
func TryLock(path string) (unlock func(), ok bool, err error) {
	f, err := open(path)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	busy, err := tryLock(f)
	if err != nil || busy {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		return nil, false, nil
	}
	return func() { f.Close() }, true, nil
}
