package corral

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/internal/pathtree"
)

// ErrRefusedPath is wrapped by the *ConfigError of a path the sandbox
// refuses in the role it was given: the root directory or a kernel
// pseudo-filesystem as a workspace, writable, read-only or changeset path;
// a home directory made writable without Config.AllowHome; a configured
// path inside a credential store hidden by default; a policy file the
// command could replace. Such a config is wrong as written, not a host that
// fails to set it up.
var ErrRefusedPath = errors.New("path refused")

// ErrWritableHome is wrapped, with ErrRefusedPath, by the *ConfigError of a
// workspace or writable path that is the caller's home directory or holds
// it, when Config.AllowHome is not set.
var ErrWritableHome = errors.New("writable home directory")

// pseudoFS are host trees that no path list may name: the sandbox has its
// own /proc and /dev, and binding the host's would hand back host
// processes, block devices or kernel knobs.
var pseudoFS = []string{"/proc", "/sys", "/dev"}

// resolvePolicy applies the rules about which paths may be configured in
// which role, adds the policy files to the read-only paths and the
// credential stores to the hidden ones. A disabled sandbox confines
// nothing, so none of it applies there.
func (s *spec) resolvePolicy(c Config) error {
	if s.Mode == ModeDisabled {
		return nil
	}
	if err := s.checkPseudo(); err != nil {
		return err
	}
	if !c.AllowHome {
		if err := s.checkHome(); err != nil {
			return err
		}
	}
	if !slices.Contains(c.AllowPlanting, guard.GitDir) {
		if err := s.checkGitDirs(); err != nil {
			return err
		}
	}
	if err := s.resolvePolicyFiles(c.PolicyFiles); err != nil {
		return err
	}
	return s.resolveCredentialStores(c.Reveal)
}

// checkGitDirs refuses a workspace or writable path that is itself a git
// directory (a bare repository, or a .git given as the path): the guard
// stages the git directories it finds in a writable root, and a root
// cannot be staged in itself, so its config and hooks would be written
// straight to the host, for git there to run later.
func (s *spec) checkGitDirs() error {
	for _, r := range s.roles() {
		if r.field == "ReadOnlyPaths" || r.field == roBinds {
			continue
		}
		if guard.GitDirAt(r.path) {
			return &ConfigError{Field: r.field, Value: r.path, Err: ErrRefusedPath,
				Reason: "is a git directory (its HEAD): the command could rewrite the config and hooks git runs there later; " +
					"use the repository's work tree, or list \".git\" in allow_planting (Config.AllowPlanting) to allow it"}
		}
	}
	return nil
}

// roles lists every configured path that the command can see, with the
// Config field it came from.
func (s *spec) roles() []role {
	var out []role
	if s.Workspace != "" {
		out = append(out, role{"Workspace", s.Workspace})
	}
	for _, p := range s.Writable {
		out = append(out, role{"WritablePaths", p})
	}
	for _, p := range s.ReadOnly {
		out = append(out, role{"ReadOnlyPaths", p})
	}
	for _, p := range s.Overlaid {
		out = append(out, role{"ChangesetPaths", p})
	}
	for _, b := range s.Binds {
		field := "Binds"
		if b.ReadOnly {
			field = roBinds
		}
		out = append(out, role{field, b.Source})
	}
	return out
}

type role struct{ field, path string }

// roBinds names the read-only Binds among the roles.
const roBinds = "Binds (read-only)"

func (s *spec) checkPseudo() error {
	for _, r := range s.roles() {
		if r.path == "/" {
			return refused(r, "is the root directory: name the directories the command needs")
		}
		for _, fs := range pseudoFS {
			if pathtree.Within(r.path, fs) {
				return refused(r, "lies in "+fs+", a kernel pseudo-filesystem: the sandbox has its own")
			}
		}
	}
	return nil
}

// checkHome refuses a workspace or writable path that is a home directory
// of the caller or holds one: shells, desktops and language runtimes run
// what lies there at the next login.
func (s *spec) checkHome() error {
	homes := callerHomes()
	for _, r := range s.roles() {
		if r.field == "ReadOnlyPaths" || r.field == roBinds {
			continue
		}
		for _, h := range homes {
			if pathtree.Within(h, r.path) {
				what := "is the home directory " + h
				if h != r.path {
					what = "holds the home directory " + h
				}
				return &ConfigError{Field: r.field, Value: r.path, Err: errors.Join(ErrRefusedPath, ErrWritableHome),
					Reason: what + ": the command could plant code that runs at the next login; set AllowHome to allow it"}
			}
		}
	}
	return nil
}

func refused(r role, reason string) error {
	return &ConfigError{Field: r.field, Value: r.path, Reason: reason, Err: ErrRefusedPath}
}

// callerHomes are the caller's home directories, canonical: $HOME and the
// passwd entry's, which differ under sudo or a test harness. Those that do
// not exist are left out.
func callerHomes() []string {
	var out []string
	add := func(h string) {
		if h == "" || !filepath.IsAbs(h) {
			return
		}
		if real, err := filepath.EvalSymlinks(h); err == nil && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	add(os.Getenv("HOME"))
	if u, err := user.Current(); err == nil {
		add(u.HomeDir)
	}
	return out
}

// resolvePolicyFiles adds each policy file to the read-only paths, after
// checking that no symlink on the way to it lies where the command could
// replace it.
func (s *spec) resolvePolicyFiles(files []string) error {
	for _, f := range files {
		p, err := s.policyFile(f)
		if err != nil {
			return err
		}
		if p != "" && !slices.Contains(s.Policy, p) {
			s.Policy = append(s.Policy, p)
		}
	}
	return nil
}

// policyFile returns the canonical path of the policy file f, or "" when
// there is nothing the command could change: a pipe, a device, a file
// under a hidden path.
func (s *spec) policyFile(f string) (string, error) {
	if f == "" || strings.ContainsRune(f, 0) {
		return "", &ConfigError{Field: "PolicyFiles", Value: f, Reason: "want a file's path"}
	}
	abs := f
	if !filepath.IsAbs(f) {
		wd, err := os.Getwd()
		if err != nil {
			return "", &ConfigError{Field: "PolicyFiles", Value: f, Reason: err.Error()}
		}
		abs = wd + "/" + f
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", &ConfigError{Field: "PolicyFiles", Value: f, Reason: "does not exist or cannot be resolved", Err: err}
	}
	if !fi.Mode().IsRegular() {
		return "", nil
	}
	if extraLinks(abs, fi) {
		return "", &ConfigError{Field: "PolicyFiles", Value: f, Err: ErrRefusedPath,
			Reason: "has more than one hard link, through which a command could write it; give it a single link"}
	}
	links, real, err := symlinksOn(abs)
	if err != nil {
		return "", &ConfigError{Field: "PolicyFiles", Value: f, Reason: "cannot be resolved", Err: err}
	}
	if pathtree.Within(real, "/proc") || pathtree.Within(real, "/dev") {
		return "", nil
	}
	for _, l := range links {
		for _, w := range append([]string{s.Workspace}, s.Writable...) {
			if pathtree.Within(l, w) {
				return "", &ConfigError{Field: "PolicyFiles", Value: f, Err: ErrRefusedPath, Reason: fmt.Sprintf(
					"is reached through the symlink %s inside the writable path %s, which a command could replace; name the file by its real path %s", l, w, real)}
			}
		}
	}
	if slices.ContainsFunc(s.Hidden, func(h string) bool { return pathtree.Within(real, h) }) {
		return "", nil // hidden: neither readable nor writable
	}
	return real, nil
}

// symlinksOn resolves p as the kernel would, one component at a time, and
// returns where each symlink it passes lies (its parent resolved) and the
// path it ends at.
func symlinksOn(p string) (links []string, real string, err error) {
	rest := strings.Split(p, "/")
	real = "/"
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			real = filepath.Dir(real)
			continue
		}
		next := filepath.Join(real, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return nil, "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			real = next
			continue
		}
		if hops++; hops > 40 {
			return nil, "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		links = append(links, next)
		target, err := os.Readlink(next)
		if err != nil {
			return nil, "", err
		}
		if filepath.IsAbs(target) {
			real = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return links, real, nil
}
