// Package mounts builds the sandbox's mount tree.
//
// The plan ([Build]) is pure data computed from a few path lists, so it is
// unit-tested without privileges and printed by `corral profile`. The executor
// ([Execute], Linux only) carries a plan out inside fresh user and mount
// namespaces and pivots into the result.
//
// # Layout
//
// The host's / is bound read-only with every submount. A fresh /proc, a
// minimal /dev and a private /tmp go on top. Then come binds ordered by depth,
// so the most specific path wins: writable roots, read-only paths (which stay
// read-only under a writable parent), protected code-planting paths inside
// writable roots, and hidden paths, which become empty and unreadable.
//
// A read-only, protected or hidden path's own mount cannot be renamed or
// removed, but a directory above it inside a writable root could be (".git"
// for ".git/hooks"): the mount would move along with it and a writable copy
// could take its place. So the directories between a writable root and such
// a path are pinned, bound onto themselves read-write, which makes them mount
// points the command can neither rename nor remove.
//
// The host can undo a bind, by replacing or moving its path: a [Guard]
// (Linux only) records the binds and puts back those the host undid.
//
// This package is an implementation part of corral, top-level so its
// design can be read and tested on its own. It carries no compatibility
// promise: its API changes with corral's needs. Programs use package
// corral.
package mounts

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/corralhq/corral/internal/pathtree"
)

// Kind is what a mount step does.
type Kind int

const (
	// RootReadOnly binds the host's / recursively and makes it read-only.
	RootReadOnly Kind = iota
	// Proc mounts a fresh procfs for the sandbox's PID namespace.
	Proc
	// Dev builds a minimal /dev: the device nodes in devices, a new devpts
	// instance, /dev/shm and the fd links.
	Dev
	// Tmpfs mounts a private, empty, world-writable tmpfs.
	Tmpfs
	// Bind binds a host path read-write.
	Bind
	// Overlay mounts overlayfs at a writable root instead of binding it:
	// the host path is the read-only lower layer and every write lands in
	// Upper, so the host's files stay untouched.
	Overlay
	// Pin binds a directory between a writable root and a read-only,
	// protected or hidden path onto itself, read-write, if it exists when
	// the command starts (see ProtectNow): a mount point cannot be renamed
	// or removed, so the path beneath cannot be moved aside and replaced.
	Pin
	// BindReadOnly binds a host path and makes it read-only.
	BindReadOnly
	// Protect binds a path read-only if it exists when the command starts
	// (see ProtectNow); it is skipped otherwise.
	Protect
	// Hide covers a path with an empty, unreadable file or directory.
	Hide
	// MountPoint makes the mount point of a bind whose source lies
	// elsewhere on the host (a destination such as /workspace), before the
	// bind itself: the directory above it is replaced by a read-only tmpfs
	// that holds the host directory's entries, each bound back in place, and
	// an empty mount point for every destination there. The host's own
	// tree is never written, and the host cannot unmount what lies on the
	// sandbox's tmpfs.
	MountPoint
)

var kindNames = [...]string{"ro-root", "proc", "dev", "tmpfs", "bind", "overlay", "pin", "ro-bind", "protect", "hide", "mountpt"}

// rank orders mounts of equal depth: a mount point goes before the bind
// made on it, then the stricter kind (later in the Kind order) goes last.
func (k Kind) rank() int {
	if k == MountPoint {
		return -1
	}
	return int(k)
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Mount is one step of a plan. Path is where it appears inside the sandbox;
// binds take the same path from the host unless Source says otherwise.
type Mount struct {
	Kind Kind
	Path string
	// Source is the host path a bind shows at Path, when it lies elsewhere
	// (a mount destination); empty when it is Path itself. For MountPoint,
	// the source of the bind to come, whose type (directory or file) the
	// mount point takes.
	Source string `json:",omitempty"`
	// MakeTarget says the mount point may be missing and lies on a tmpfs
	// the plan created, so the executor may create it there.
	MakeTarget bool
	// Upper and Work are the overlay's upper and work directories on the
	// host, for Kind Overlay only.
	Upper, Work string `json:",omitempty"`
	// Size caps a Tmpfs, or the /dev/shm of a Dev, in bytes (tmpfs size=);
	// zero leaves the kernel's default, half of the host's memory.
	Size int64 `json:",omitempty"`
}

func (m Mount) String() string {
	s := fmt.Sprintf("%-8s %s", m.Kind, m.Path)
	if m.Kind == Overlay {
		s += " (changes in " + m.Upper + ")"
	}
	if m.Source != "" && m.Kind != MountPoint {
		s += " (from " + m.Source + ")"
	}
	if m.MakeTarget {
		s += " (mount point created)"
	}
	if m.Size > 0 {
		what := "size"
		if m.Kind == Dev {
			what = "/dev/shm size"
		}
		s += fmt.Sprintf(" (%s %s)", what, sizeString(m.Size))
	}
	return s
}

// sizeString is n bytes in MiB when it is a whole number of them.
func sizeString(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Plan is the ordered list of mounts that builds a sandbox's file tree.
type Plan struct {
	Mounts []Mount
}

func (p *Plan) String() string {
	var b strings.Builder
	for _, m := range p.Mounts {
		b.WriteString(m.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// devices are the device nodes bound into the sandbox's /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// Input is what a plan is built from. Every path must be absolute, clean and
// free of symlinks (the caller canonicalizes them).
type Input struct {
	Writable []string // the workspace first, then other writable paths
	ReadOnly []string
	Hidden   []string
	// Protected are names relative to each writable root (".git",
	// ".vscode"). The plan has no mounts for them: they are guarded when
	// each command starts (package internal/guard); the Landlock rung
	// makes them read-only instead.
	Protected []string
	// Homes are the caller's home directories: a name listed for the
	// top of a root (.config/git, .local/bin) is guarded relative to each
	// too, where a writable root lies inside one (--writable ~/.config).
	Homes []string
	// Overlays are writable roots mounted as overlayfs instead of bound,
	// so that writes go to a changeset rather than the host.
	Overlays []OverlayRoot
	// TmpSize caps the private /tmp and /dev/shm, each, in bytes; zero
	// leaves the kernel's default, half of the host's memory.
	TmpSize int64
	// Sources maps each destination, a writable or read-only path as the
	// sandbox sees it, to the host path bound there. Every path of the
	// lists above is as the sandbox sees it: one inside a destination (a
	// hidden file in a workspace shown at /workspace) takes its host path
	// from there. A destination lies under no other destination and under
	// no other path of the plan, and is not overlaid (the caller checks).
	Sources map[string]string
	// Layered are directories mounted as overlayfs whose writes land in
	// Upper, the host's directory left as it is (a persistent home). They
	// are not writable roots: a writable path inside one is bound from the
	// host on top, and protected names are not looked for in them.
	Layered []OverlayRoot
	// Tmp, when set, is a host directory bound at /tmp in place of a
	// private tmpfs, so that /tmp outlives each command.
	Tmp string
}

// OverlayRoot says which writable root is mounted as overlayfs and where its
// upper and work directories are. Both lie on one host filesystem outside
// every writable root.
type OverlayRoot struct {
	Path, Upper, Work string
}

// Build computes the plan for in. It does not touch the filesystem.
func Build(in Input) *Plan {
	tmp := Mount{Kind: Tmpfs, Path: "/tmp", Size: in.TmpSize}
	if in.Tmp != "" {
		tmp = Mount{Kind: Bind, Path: "/tmp", Source: in.Tmp}
	}
	p := &Plan{Mounts: []Mount{
		{Kind: RootReadOnly, Path: "/"},
		{Kind: Proc, Path: "/proc"},
		{Kind: Dev, Path: "/dev", Size: in.TmpSize},
		tmp,
	}}
	var binds []Mount
	add := func(k Kind, paths ...string) {
		for _, pth := range paths {
			binds = append(binds, Mount{Kind: k, Path: pth})
		}
	}
	addWritable(&binds, in)
	for _, l := range in.Layered {
		binds = append(binds, Mount{Kind: Overlay, Path: l.Path, Upper: l.Upper, Work: l.Work})
	}
	add(BindReadOnly, in.ReadOnly...)
	add(Hide, in.Hidden...)
	for _, p := range slices.Concat(in.ReadOnly, in.Hidden) {
		for _, root := range in.Writable {
			add(Pin, above(p, root)...)
		}
		for _, l := range in.Layered {
			add(Pin, above(p, l.Path)...)
		}
	}
	binds = dedupe(addSources(binds, in.Sources))
	// Deeper paths mount later, so the most specific rule wins; at equal
	// depth the stricter kind (later in the Kind order) goes last.
	slices.SortStableFunc(binds, func(a, b Mount) int {
		if d := depth(a.Path) - depth(b.Path); d != 0 {
			return d
		}
		return a.Kind.rank() - b.Kind.rank()
	})
	for _, m := range binds {
		if m.Kind == Hide && !visible(m.Path, binds) {
			continue // under the private /tmp or /dev: the host's copy is not there
		}
		if m.Kind == Protect && hidden(m.Path, binds) {
			continue // nothing under a hidden path can be reached to be planted
		}
		if m.Kind == Hide && hidden(m.Path, binds) {
			// Hidden already, with its mount point: a path hidden in the
			// source of a destination that is itself hidden at its host
			// path, which needs hiding at the destination only.
			continue
		}
		if m.Kind == Pin && !writable(m.Path, binds) {
			continue // nothing there can be renamed in the first place
		}
		m.MakeTarget = onPlanTmpfs(m.Path, binds)
		if m.Kind == MountPoint && m.MakeTarget {
			continue // the bind creates its own mount point on the private /tmp
		}
		p.Mounts = append(p.Mounts, m)
	}
	return p
}

// addSources sets the host source of each bind in a destination and adds
// the mount point each destination needs.
func addSources(binds []Mount, sources map[string]string) []Mount {
	for i, m := range binds {
		switch m.Kind {
		case Bind, BindReadOnly, Hide, Overlay:
		default:
			continue
		}
		if src, ok := sources[m.Path]; ok && m.Kind != Hide {
			binds = append(binds, Mount{Kind: MountPoint, Path: m.Path, Source: src})
		}
		binds[i].Source = hostOf(m.Path, sources)
	}
	return binds
}

// hostOf returns the host path shown at p when p lies in a destination, and
// "" otherwise.
func hostOf(p string, sources map[string]string) string {
	for dest, src := range sources {
		if rel, ok := pathtree.Rel(dest, p); ok {
			return path.Join(src, rel)
		}
	}
	return ""
}

// addWritable binds each writable root, or mounts its overlay. A writable
// path inside an overlay is writable already, and binding the host's copy
// there would let writes bypass the overlay, so it gets no mount of its own.
func addWritable(binds *[]Mount, in Input) {
	for _, p := range in.Writable {
		if o, ok := overlayAt(in.Overlays, p); ok {
			*binds = append(*binds, Mount{Kind: Overlay, Path: p, Upper: o.Upper, Work: o.Work})
			continue
		}
		if !slices.ContainsFunc(in.Overlays, func(o OverlayRoot) bool { return pathtree.Within(p, o.Path) }) {
			*binds = append(*binds, Mount{Kind: Bind, Path: p})
		}
	}
}

func overlayAt(overlays []OverlayRoot, p string) (OverlayRoot, bool) {
	for _, o := range overlays {
		if o.Path == p {
			return o, true
		}
	}
	return OverlayRoot{}, false
}

// above returns the directories strictly between root and p, when p lies
// beneath root.
func above(p, root string) []string {
	if p == root || !pathtree.Within(p, root) {
		return nil
	}
	var out []string
	for d := path.Dir(p); d != root && pathtree.Within(d, root); d = path.Dir(d) {
		out = append(out, d)
	}
	return out
}

// writable reports whether p lies in a writable root with no read-only or
// hidden path in between: the mount that decides p is a bind or an overlay.
func writable(p string, binds []Mount) bool {
	decider := -1
	for i, b := range binds {
		switch b.Kind {
		case Bind, Overlay, BindReadOnly, Hide:
		default:
			continue
		}
		// binds are sorted by depth, then strictness: the last match decides.
		if pathtree.Within(p, b.Path) {
			decider = i
		}
	}
	return decider >= 0 && (binds[decider].Kind == Bind || binds[decider].Kind == Overlay)
}

// dedupe drops a mount whose path and kind repeat an earlier one.
func dedupe(ms []Mount) []Mount {
	seen := map[Mount]bool{}
	out := ms[:0]
	for _, m := range ms {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// onPlanTmpfs reports whether p lies under the private /tmp or /dev without
// a host bind in between, so that its mount point is ours to create.
func onPlanTmpfs(p string, binds []Mount) bool {
	if !pathtree.Within(p, "/tmp") && !pathtree.Within(p, "/dev") || p == "/tmp" || p == "/dev" {
		return false
	}
	for _, b := range binds {
		if b.Path != p && pathtree.Within(p, b.Path) && b.Kind != Hide {
			return false // the nearest parent is a host bind
		}
	}
	return true
}

// visible reports whether a host path at p shows through in the sandbox:
// everything does except what lies under the private /tmp and /dev.
func visible(p string, binds []Mount) bool {
	if !pathtree.Within(p, "/tmp") && !pathtree.Within(p, "/dev") {
		return true
	}
	return !onPlanTmpfs(p, binds)
}

// hidden reports whether p lies strictly under a hidden path.
func hidden(p string, binds []Mount) bool {
	for _, b := range binds {
		if b.Kind == Hide && b.Path != p && pathtree.Within(p, b.Path) {
			return true
		}
	}
	return false
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}
