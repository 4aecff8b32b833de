package zones

import (
	"fmt"
	"path/filepath"
	"slices"
)

// Mode is what a worker may do in a zone: its capability.
type Mode string

const (
	// ReadOnly lets a worker read and list.
	ReadOnly Mode = "ro"
	// ReadWrite lets it also create, change and delete, subject to the
	// zone's approvals.
	ReadWrite Mode = "rw"
)

// rank orders modes: a child may hold a mode only up to its parent's.
func (m Mode) rank() int {
	if m == ReadWrite {
		return 1
	}
	return 0
}

// ParseMode returns the mode s names.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ReadOnly, ReadWrite:
		return Mode(s), nil
	}
	return "", fmt.Errorf("%q is not a mode; want \"ro\" or \"rw\"", s)
}

// Zone is one named directory a project offers its workers.
type Zone struct {
	// Name is the zone's directory inside the sandbox: /Name.
	Name string `json:"name"`
	// Path is the host directory, absolute and clean.
	Path string `json:"path"`
	// Mode is the most any worker may hold on it.
	Mode Mode `json:"mode"`
	// Approval is the consent its changes need, at the least.
	Approval Approval `json:"approval"`
}

// DefaultRoot is where the default zones live, relative to the project.
const DefaultRoot = ".sandbox"

// Defaults returns the zones a project that defines none has: cache (for
// downloads) and workspace (for working files), both writable, in
// root/.sandbox/cache and root/.sandbox/workspace.
func Defaults(root string) []Zone {
	return []Zone{
		{Name: "cache", Path: filepath.Join(root, DefaultRoot, "cache"), Mode: ReadWrite, Approval: DefaultApproval(ReadWrite)},
		{Name: "workspace", Path: filepath.Join(root, DefaultRoot, "workspace"), Mode: ReadWrite, Approval: DefaultApproval(ReadWrite)},
	}
}

// reserved are names the sandbox's own tree uses at its top: a zone there
// would hide the system a command runs on.
var reserved = []string{
	"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32",
	"media", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var",
}

// CheckName reports whether name can name a zone: letters, digits, '_'
// and '-' (so one path component and one TOML key), not a directory the
// system itself keeps at the top of the tree.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("%q is not a valid name; use letters, digits, '_' or '-'", name)
	}
	for _, c := range name {
		ok := c == '_' || c == '-' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
		if !ok {
			return fmt.Errorf("%q is not a valid name; use letters, digits, '_' or '-'", name)
		}
	}
	if slices.Contains(reserved, name) {
		return fmt.Errorf("%q is a system directory at the top of the sandbox; choose another name", name)
	}
	return nil
}

// Check validates a project's zones: valid, unique names, absolute clean
// paths, known modes and approvals.
func Check(zs []Zone) error {
	seen := map[string]bool{}
	for _, z := range zs {
		if err := CheckName(z.Name); err != nil {
			return err
		}
		if seen[z.Name] {
			return fmt.Errorf("%s is defined twice", z.Name)
		}
		seen[z.Name] = true
		if !filepath.IsAbs(z.Path) || filepath.Clean(z.Path) != z.Path {
			return fmt.Errorf("%s: path %q is not absolute and clean", z.Name, z.Path)
		}
		if _, err := ParseMode(string(z.Mode)); err != nil {
			return fmt.Errorf("%s: %w", z.Name, err)
		}
		if err := z.Approval.check(); err != nil {
			return fmt.Errorf("%s: %w", z.Name, err)
		}
	}
	return nil
}
