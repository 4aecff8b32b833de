package learn

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// containers are directories of the home that hold one directory per
// program: a write below them is learned one level deeper (~/.cache/pip,
// not ~/.cache).
var containers = []string{".cache", ".config", ".local", ".local/share", ".local/state", ".local/lib", ".var/app"}

// writes learns writable_paths from the writes the layered home took and
// the writes refused outside it.
func (b *builder) writes() {
	type dir struct {
		path  string
		first string
		count int
	}
	var dirs []*dir
	addPath := func(target, first string, count int) {
		for _, d := range dirs {
			if d.path == target {
				d.count += count
				return
			}
		}
		dirs = append(dirs, &dir{path: target, first: first, count: count})
	}
	for _, p := range b.s.HomeWrites {
		if b.covered(p) {
			continue
		}
		addPath(b.collapse(p), p, 1)
	}
	for _, ev := range b.s.Events {
		if ev.Kind != "write" || ev.Rule != "outside the writable paths" || ev.Target == "" || b.covered(ev.Target) {
			continue
		}
		first := ev.Target
		if ev.Process != "" {
			first += " by " + ev.Process
		}
		addPath(b.collapse(ev.Target), first, max(ev.Count, 1))
	}
	// A directory learned inside another learned one is the other's.
	slices.SortStableFunc(dirs, func(a, c *dir) int { return len(a.path) - len(c.path) })
	var kept []*dir
	for _, d := range dirs {
		i := slices.IndexFunc(kept, func(k *dir) bool { return within(d.path, k.path) })
		if i >= 0 {
			kept[i].count += d.count
			continue
		}
		kept = append(kept, d)
	}
	for _, d := range kept {
		e := Entry{Key: "writable_paths", Value: Quote(d.path), Why: why("first "+d.first, d.count, "write")}
		e.Weakens = b.weakens(d.path)
		if e.Weakens == "" && !b.s.Exists(d.path) {
			e.Warning = "does not exist on the host yet: create it before using this config"
		}
		b.add(e)
	}
}

// collapse is the directory to make writable for a write to p: in the
// home, the entry of the home (or of a container such as ~/.cache) that
// p lies in; elsewhere the directory p lies in.
func (b *builder) collapse(p string) string {
	home := b.s.Home
	if home != "" && within(p, home) && p != home {
		rel, _ := filepath.Rel(home, p)
		parts := strings.Split(rel, string(filepath.Separator))
		n := 1
		for n < len(parts) && slices.Contains(containers, filepath.Join(parts[:n]...)) {
			n++
		}
		if n == len(parts) && n > 1 {
			n-- // a file directly in a container: the container's own
		}
		return filepath.Join(append([]string{home}, parts[:n]...)...)
	}
	d := filepath.Dir(p)
	for d != "/" && !b.s.Exists(d) {
		d = filepath.Dir(d)
	}
	return d
}

// covered tells whether p is already writable.
func (b *builder) covered(p string) bool {
	for _, w := range b.s.Writable {
		if within(p, w) {
			return true
		}
	}
	return false
}

// weakens says which protection making p writable would lift, or "".
func (b *builder) weakens(p string) string {
	home := b.s.Home
	switch {
	case p == "/":
		return "the whole host"
	case home != "" && within(home, p):
		return "the home writable: a command could plant code that runs at the next login (allow_home)"
	}
	for _, c := range b.s.CredentialStores {
		if within(p, c) || within(c, p) {
			return fmt.Sprintf("holds the credential store %s, hidden by default", c)
		}
	}
	if home != "" && within(p, home) {
		rel, _ := filepath.Rel(home, p)
		for _, n := range b.s.Protected {
			if rel == n || within(rel, n) || within(n, rel) {
				return "a protected name: programs on the host run code from " + n
			}
		}
	}
	if slices.Contains(b.s.Protected, filepath.Base(p)) {
		return "a protected name: programs on the host run code from " + filepath.Base(p)
	}
	return ""
}

// within tells whether p is dir or lies below it.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
