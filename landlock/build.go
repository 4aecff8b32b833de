package landlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/corralhq/corral/internal/pathtree"
)

// Entry is what a tree may do: Access applies to Path and everything beneath
// it, except deeper entries, which replace it for their own trees (a hidden
// path inside a readable root gets None, a workspace gets ReadWrite).
type Entry struct {
	Path   string
	Access Access
}

// Input is everything a policy is built from.
type Input struct {
	// ABI is the kernel's Landlock ABI version (see [ABI]).
	ABI int
	// Entries are absolute, clean paths. Missing ones are skipped: there is
	// nothing to grant, and nothing to carve out.
	Entries []Entry
	// DenyTCP forbids every TCP bind and connect (ABI 4), for a network-less
	// sandbox that has no network namespace to rely on.
	DenyTCP bool
	// ConnectTCP are the ports a DenyTCP sandbox may still connect to (a
	// proxy's on the host's loopback). Landlock's rules name ports, not
	// addresses: a connect to that port of any address is allowed.
	ConnectTCP []uint16
	// Scope confines abstract unix sockets and signals to the sandbox
	// (ABI 6): it cannot reach processes outside through either.
	Scope bool
}

// Rule grants Access to the tree at Path (a single file when Dir is false).
type Rule struct {
	Path   string
	Access Access
	Dir    bool
}

func (r Rule) String() string { return fmt.Sprintf("%-40s %v", r.Path, r.Access) }

// Policy is a complete ruleset, ready for [Restrict].
type Policy struct {
	ABI        int
	HandledFS  Access
	HandledNet uint64 // LANDLOCK_ACCESS_NET_* rights denied outright
	Scoped     uint64 // LANDLOCK_SCOPE_* flags
	Rules      []Rule
	// ConnectTCP are the TCP ports connect is allowed to despite
	// HandledNet.
	ConnectTCP []uint16
}

func (p *Policy) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "landlock ABI %d, handled %v, net %#x, scoped %#x\n", p.ABI, p.HandledFS, p.HandledNet, p.Scoped)
	for _, port := range p.ConnectTCP {
		fmt.Fprintf(&b, "%-40s connect\n", fmt.Sprintf("tcp port %d", port))
	}
	for _, r := range p.Rules {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// FS is what Build reads of the filesystem: whether entries exist and are
// directories, and the contents of directories it carves.
type FS interface {
	Stat(path string) (fs.FileInfo, error)
	ReadDir(dir string) ([]fs.DirEntry, error)
}

// OS returns the real filesystem.
func OS() FS { return osFS{} }

type osFS struct{}

func (osFS) Stat(p string) (fs.FileInfo, error)      { return os.Stat(p) }
func (osFS) ReadDir(d string) ([]fs.DirEntry, error) { return os.ReadDir(d) }

// ErrUnsupported is returned when the kernel lacks a feature the input asks
// for.
var ErrUnsupported = errors.New("not supported by the kernel's Landlock ABI")

// Build computes the rules for in. It reads fsys only to skip missing
// entries and to list the directories it carves.
func Build(in Input, fsys FS) (*Policy, error) {
	if err := check(in); err != nil {
		return nil, err
	}
	p := &Policy{ABI: in.ABI, HandledFS: HandledFS(in.ABI)}
	if in.DenyTCP {
		p.HandledNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
		p.ConnectTCP = slices.Clone(in.ConnectTCP)
	}
	if in.Scope {
		p.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	b := &builder{fs: fsys, handled: p.HandledFS, want: map[string]Access{}, dir: map[string]bool{}}
	if err := b.load(in.Entries); err != nil {
		return nil, err
	}
	for _, root := range b.roots() {
		if err := b.visit(root, 0); err != nil {
			return nil, err
		}
	}
	p.Rules = b.rules
	return p, nil
}

func check(in Input) error {
	switch {
	case in.ABI < 1:
		return fmt.Errorf("landlock: %w (no Landlock)", ErrUnsupported)
	case len(in.ConnectTCP) > 0 && !in.DenyTCP:
		return errors.New("landlock: ConnectTCP needs DenyTCP")
	case in.DenyTCP && in.ABI < ABINet:
		return fmt.Errorf("landlock: TCP restriction needs ABI %d, have %d: %w", ABINet, in.ABI, ErrUnsupported)
	case in.Scope && in.ABI < ABIScope:
		return fmt.Errorf("landlock: scoping needs ABI %d, have %d: %w", ABIScope, in.ABI, ErrUnsupported)
	}
	for _, e := range in.Entries {
		if !path.IsAbs(e.Path) || path.Clean(e.Path) != e.Path {
			return fmt.Errorf("landlock: path %q is not absolute and clean", e.Path)
		}
	}
	return nil
}

// builder carves the entries into rules.
type builder struct {
	fs      FS
	handled Access
	want    map[string]Access // configured entries that exist
	dir     map[string]bool
	paths   []string // keys of want, sorted
	rules   []Rule
}

// load records the entries that exist. A path listed twice gets the rights
// both entries agree on.
func (b *builder) load(entries []Entry) error {
	for _, e := range entries {
		fi, err := b.fs.Stat(e.Path)
		// A path beneath a file (a protected name inside a writable root
		// that is a file) does not exist either.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("landlock: stat %s: %w", e.Path, err)
		}
		a := e.Access & b.handled
		if old, ok := b.want[e.Path]; ok {
			a &= old
		}
		b.want[e.Path] = a
		b.dir[e.Path] = fi.IsDir()
	}
	for p := range b.want {
		b.paths = append(b.paths, p)
	}
	slices.Sort(b.paths)
	return nil
}

// roots are the entries with no configured ancestor.
func (b *builder) roots() []string {
	var out []string
	for _, p := range b.paths {
		if _, ok := b.nearest(parent(p)); p == "/" || !ok {
			out = append(out, p)
		}
	}
	return out
}

// visit grants the tree at p what it wants, given the rights its ancestors'
// rules already grant. Rights that some entry beneath p must not have are
// pushed down to p's other children instead of granted on p.
func (b *builder) visit(p string, granted Access) error {
	want, _ := b.nearest(p)
	below := b.below(p)
	floor := want
	for _, e := range below {
		floor &= b.want[e]
	}
	if floor&^granted != 0 {
		b.add(p, floor, b.isDir(p))
		granted |= floor
	}
	if len(below) == 0 {
		return nil
	}
	next := nextNames(p, below)
	if want&^granted != 0 {
		if err := b.carve(p, want, next); err != nil {
			return err
		}
	}
	for _, name := range next {
		if err := b.visit(path.Join(p, name), granted); err != nil {
			return err
		}
	}
	return nil
}

// carve grants want to every entry of dir except those that lead to a
// configured path. Symlinks are left out: a rule on one would grant its
// target. A directory we may not list keeps what it has (nothing more).
func (b *builder) carve(dir string, want Access, skip []string) error {
	ents, err := b.fs.ReadDir(dir)
	if errors.Is(err, fs.ErrPermission) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock: list %s: %w", dir, err)
	}
	for _, de := range ents {
		if slices.Contains(skip, de.Name()) || de.Type()&fs.ModeSymlink != 0 {
			continue
		}
		b.add(path.Join(dir, de.Name()), want, de.IsDir())
	}
	return nil
}

func (b *builder) add(p string, a Access, dir bool) {
	if !dir {
		a &= fileRights
	}
	if a != 0 {
		b.rules = append(b.rules, Rule{Path: p, Access: a, Dir: dir})
	}
}

// isDir reports whether p is a directory; paths between entries are.
func (b *builder) isDir(p string) bool {
	d, ok := b.dir[p]
	return d || !ok
}

// nearest returns the wanted access of the deepest entry at or above p.
func (b *builder) nearest(p string) (Access, bool) {
	for {
		if a, ok := b.want[p]; ok {
			return a, true
		}
		if p == "/" || p == "." {
			return 0, false
		}
		p = parent(p)
	}
}

// below lists the entries strictly beneath p.
func (b *builder) below(p string) []string {
	var out []string
	for _, e := range b.paths {
		if e != p && pathtree.Within(e, p) {
			out = append(out, e)
		}
	}
	return out
}

// nextNames returns, sorted and unique, the first component below p of each
// path in paths.
func nextNames(p string, paths []string) []string {
	var out []string
	for _, e := range paths {
		rest := strings.TrimPrefix(strings.TrimPrefix(e, p), "/")
		name, _, _ := strings.Cut(rest, "/")
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func parent(p string) string { return path.Dir(p) }
