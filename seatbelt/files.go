package seatbelt

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/corralhq/corral/internal/pathtree"
)

// Parameter names, by role. Those that can repeat get a _N suffix.
const (
	paramWorkspace = "WORKSPACE"
	paramTempDir   = "TMPDIR"
	paramWritable  = "WRITABLE"
	paramReadOnly  = "READ_ONLY"
	paramProtected = "PROTECTED"
	paramHidden    = "HIDDEN"
	paramPinned    = "PINNED"
)

// access is what a path rule grants or takes away. At equal depth a later
// (stricter) kind is emitted later, so it wins.
type access int

const (
	writable access = iota
	readOnly
	protected
	hidden
)

// pathRule is one path-scoped rule before it is written out.
type pathRule struct {
	path   string
	param  string
	access access
}

func (r pathRule) String() string {
	s := fmt.Sprintf("(subpath %s)", ref(r.param))
	switch r.access {
	case writable:
		return "(allow file-write* " + s + ")"
	case readOnly:
		return "(deny file-write* " + s + ") ; read-only"
	case protected:
		return "(deny file-write* " + s + ") ; protected"
	default:
		return "(deny file-read* file-write* file-map-executable process-exec " + s + ") ; hidden"
	}
}

const filesComment = `
; Paths, most general first: the last matching rule wins, so a read-only,
; protected or hidden path overrides a writable root that contains it.
`

const pinnedComment = `
; Pinned: the writable roots and every directory inside them above a
; read-only, protected or hidden path cannot be removed or renamed, so
; those paths cannot be moved aside and replaced.
`

// files writes the path rules and the pins that keep them in place.
func (g *generator) files(in Input, protectedPaths []string) {
	rules := g.pathRules(in, protectedPaths)
	slices.SortStableFunc(rules, func(a, b pathRule) int {
		if d := depth(a.path) - depth(b.path); d != 0 {
			return d
		}
		return int(a.access) - int(b.access)
	})
	g.b.WriteString(filesComment)
	seen := map[string]bool{}
	for _, r := range rules {
		if line := r.String(); !seen[line] {
			seen[line] = true
			g.b.WriteString(line + "\n")
		}
	}
	g.pins(rules)
}

// pathRules defines a parameter for every configured path and returns the
// rules, in the order of the input.
func (g *generator) pathRules(in Input, protectedPaths []string) []pathRule {
	var rules []pathRule
	add := func(prefix string, a access, paths ...string) {
		for _, p := range paths {
			rules = append(rules, pathRule{path: p, param: g.param(prefix, p), access: a})
		}
	}
	add(paramWorkspace, writable, in.Workspace)
	add(paramWritable, writable, in.Writable...)
	if in.TempDir != "" {
		add(paramTempDir, writable, in.TempDir)
	}
	add(paramReadOnly, readOnly, in.ReadOnly...)
	add(paramProtected, protected, protectedPaths...)
	add(paramHidden, hidden, in.Hidden...)
	return rules
}

// protectedPaths joins every protected name to every writable root the
// caller configured (not the fresh temporary directory), locates each and
// normalizes the result. in must have passed normalized.
func (in Input) protectedPaths() ([]string, error) {
	locate := in.Locate
	if locate == nil {
		locate = func(p string) []string { return []string{p} }
	}
	var out []string
	for _, root := range append([]string{in.Workspace}, in.Writable...) {
		for _, name := range in.Protected {
			for _, p := range locate(path.Join(root, name)) {
				n, err := normalizePath("Protected", p)
				if err != nil {
					return nil, err
				}
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// pins writes one rule denying removal and renaming of every writable root
// and of every directory inside one that contains a stricter path.
func (g *generator) pins(rules []pathRule) {
	var roots, pinned []string
	pin := func(name string) {
		if !slices.Contains(pinned, name) {
			pinned = append(pinned, name)
		}
	}
	for _, r := range rules {
		if r.access == writable {
			roots = append(roots, r.path)
			pin(r.param)
		}
	}
	for _, r := range rules {
		if r.access == writable {
			continue
		}
		for dir := path.Dir(r.path); dir != "/"; dir = path.Dir(dir) {
			if insideAny(dir, roots) {
				pin(g.param(paramPinned, dir))
			}
		}
	}
	g.b.WriteString(pinnedComment)
	g.b.WriteString("(deny file-write-unlink")
	for _, name := range pinned {
		fmt.Fprintf(&g.b, "\n  (literal %s)", ref(name))
	}
	g.b.WriteString(")\n")
}

// network writes the rules of the network mode and the unix-socket
// allowance for the temporary directory.
func (g *generator) network(in Input) {
	switch {
	case in.NetworkNone:
		g.b.WriteString(noNetworkRules)
	case len(in.ProxyPorts) > 0:
		g.b.WriteString(proxyNetworkRules)
		for _, port := range in.ProxyPorts {
			fmt.Fprintf(&g.b, "(allow network-outbound (remote ip \"localhost:%s\"))\n", proxyPort(port))
		}
	default:
		g.b.WriteString(hostNetworkRules)
	}
	if in.TempDir == "" {
		return
	}
	tmp := ref(g.param(paramTempDir, in.TempDir))
	g.b.WriteString("\n; Unix sockets: bound and reached only inside the command's temporary\n; directory.\n")
	fmt.Fprintf(&g.b, "(allow network-bind network-inbound (local unix-socket (subpath %s)))\n", tmp)
	fmt.Fprintf(&g.b, "(allow network-outbound (remote unix-socket (subpath %s)))\n", tmp)
}

func insideAny(p string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return pathtree.Within(p, r) })
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// proxyPort is a port of ProxyPorts as the profile writes it: 0, a port not
// yet known, is PORT.
func proxyPort(port int) string {
	if port == 0 {
		return "PORT"
	}
	return strconv.Itoa(port)
}
