//go:build unix

package corral

import (
	"os"
	"path/filepath"
	"strings"
)

// defaultPath is searched when the command's environment has no PATH, as
// in the Linux backend.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// lookPath finds the executable name names for a command that runs in dir
// with environment env, for backends that execute on the host's own file
// tree: a name with a slash is taken relative to dir, any other is searched
// in env's PATH, as a shell inside the sandbox would. Hidden paths count as
// missing, since the command cannot see them. It returns ErrNotFound or
// ErrNotExecutable.
func lookPath(name, dir string, env []string, hidden []string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		fi, err := visibleStat(p, hidden)
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
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		fi, err := visibleStat(p, hidden)
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

// visibleStat stats p unless it resolves into a hidden path.
func visibleStat(p string, hidden []string) (os.FileInfo, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	for _, h := range hidden {
		if within(real, h) {
			return nil, os.ErrNotExist
		}
	}
	return os.Stat(real)
}

func pathVar(env []string) string {
	v := defaultPath
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			v = p
		}
	}
	return v
}
