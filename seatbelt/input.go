package seatbelt

import (
	"fmt"
	"path"
	"strings"

	"github.com/corralhq/corral/internal/pathtree"
)

// Input describes one sandboxed command. Paths must be absolute and clean,
// and canonical on the Mac that applies the profile.
type Input struct {
	// Workspace is writable; it is required.
	Workspace string
	// Writable are further writable directories or files.
	Writable []string
	// ReadOnly stay read-only even inside a writable path.
	ReadOnly []string
	// Hidden can be neither read, listed, written nor executed.
	Hidden []string
	// Protected are names relative to each writable root (the workspace and
	// Writable) that stay read-only, such as ".git/hooks".
	Protected []string
	// TempDir is the command's private temporary directory: writable, and
	// the only place its unix sockets may live. Empty means none.
	TempDir string
	// NetworkNone denies all IP networking.
	NetworkNone bool
	// ProxyPorts, unless NetworkNone, limits IP to TCP connections to
	// these ports on localhost: those of a proxy that the caller serves
	// (corral's Network "allow"). 0 stands for a port not yet known, in a
	// profile printed for reading.
	ProxyPorts []int
	// Locate maps one protected path (a writable root joined with a name) to
	// the paths the profile must cover for it, or to none to skip it. Nil
	// covers every protected path as it is; the runner passes
	// [LocateProtected].
	Locate func(path string) []string
}

// normalized returns a copy of in with every path checked and its /tmp, /var
// and /etc aliases rewritten.
func (in Input) normalized() (Input, error) {
	out := in
	var err error
	if in.Workspace == "" {
		return out, invalid("Workspace", "", "required")
	}
	if out.Workspace, err = normalizePath("Workspace", in.Workspace); err != nil {
		return out, err
	}
	if in.TempDir != "" {
		if out.TempDir, err = normalizePath("TempDir", in.TempDir); err != nil {
			return out, err
		}
	}
	if out.Writable, err = normalizeAll("Writable", in.Writable); err != nil {
		return out, err
	}
	if out.ReadOnly, err = normalizeAll("ReadOnly", in.ReadOnly); err != nil {
		return out, err
	}
	if out.Hidden, err = normalizeAll("Hidden", in.Hidden); err != nil {
		return out, err
	}
	for _, name := range in.Protected {
		if err := checkName(name); err != nil {
			return out, err
		}
	}
	return out, out.checkHidden()
}

// checkHidden refuses a configured path inside a hidden one: the profile
// could not both hide the parent and show the child.
func (in Input) checkHidden() error {
	others := append([]string{in.Workspace}, in.Writable...)
	others = append(others, in.ReadOnly...)
	if in.TempDir != "" {
		others = append(others, in.TempDir)
	}
	for _, h := range in.Hidden {
		if h == "/" {
			return invalid("Hidden", h, "cannot hide the root")
		}
		for _, p := range others {
			if pathtree.Within(p, h) {
				return invalid("Hidden", h, fmt.Sprintf("contains %s, which is also configured", p))
			}
		}
	}
	return nil
}

func normalizeAll(field string, paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		n, err := normalizePath(field, p)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func normalizePath(field, p string) (string, error) {
	switch {
	case p == "":
		return "", invalid(field, p, "empty path")
	case strings.ContainsRune(p, 0):
		return "", invalid(field, p, "contains a NUL byte")
	case !path.IsAbs(p):
		return "", invalid(field, p, "not an absolute path")
	case path.Clean(p) != p:
		return "", invalid(field, p, "not a clean path")
	}
	return Canonical(p), nil
}

func checkName(name string) error {
	switch {
	case name == "" || strings.ContainsRune(name, 0):
		return invalid("Protected", name, "empty or contains a NUL byte")
	case path.IsAbs(name) || path.Clean(name) != name || name == "." ||
		name == ".." || strings.HasPrefix(name, "../"):
		return invalid("Protected", name, "not a clean relative path inside a writable root")
	}
	return nil
}

// aliases are the macOS symlinks in / that Seatbelt never sees through:
// it matches /private/tmp/x, never /tmp/x.
var aliases = []string{"/tmp", "/var", "/etc"}

// Canonical rewrites a path under /tmp, /var or /etc to its /private
// target, as macOS resolves it, so a profile generated on another OS is
// still right. Other paths are returned unchanged.
func Canonical(p string) string {
	for _, a := range aliases {
		if pathtree.Within(p, a) {
			return "/private" + p
		}
	}
	return p
}

func invalid(field, value, reason string) error {
	if value == "" {
		return fmt.Errorf("seatbelt: %s: %s", field, reason)
	}
	return fmt.Errorf("seatbelt: %s %q: %s", field, value, reason)
}
