// Package lookpath finds the executable a command name stands for, as a
// shell inside a sandbox would: in the PATH of the command's own
// environment, relative entries and names taken from the command's working
// directory. The sandbox backends share it; what a backend can see is its
// stat function.
package lookpath

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// DefaultPath is searched when the environment has no PATH.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// The two ways a lookup fails; their texts are what callers report.
var (
	ErrNotFound      = errors.New("executable file not found")
	ErrNotExecutable = errors.New("permission denied")
)

// Find returns the path of the executable name for a command running in
// dir with environment env, or ErrNotFound or ErrNotExecutable. stat
// follows symlinks, as os.Stat does, and reports what the command would
// see.
func Find(name, dir string, env []string, stat func(string) (fs.FileInfo, error)) (string, error) {
	if strings.Contains(name, "/") {
		p := abs(name, dir)
		fi, err := stat(p)
		switch {
		case err != nil:
			return "", ErrNotFound
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			return "", ErrNotExecutable
		}
		return p, nil
	}
	denied := false
	for _, d := range filepath.SplitList(pathVar(env)) {
		p := abs(filepath.Join(d, name), dir)
		fi, err := stat(p)
		switch {
		case err != nil || fi.IsDir():
			continue
		case fi.Mode()&0o111 == 0:
			denied = true
			continue
		}
		return p, nil
	}
	if denied {
		return "", ErrNotExecutable
	}
	return "", ErrNotFound
}

// abs resolves p against dir; an empty PATH entry means dir itself.
func abs(p, dir string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func pathVar(env []string) string {
	v := DefaultPath
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			v = p
		}
	}
	return v
}
