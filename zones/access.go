package zones

import (
	"fmt"
	"slices"
	"strings"
)

// Decl is a worker's request for one zone, as its sandbox table declares
// it: [agents.sandbox] zones = [{ name = "data", mode = "rw" }].
type Decl struct {
	Name string `json:"name"`
	// Mode is what the worker asks for; "ro" when left empty.
	Mode Mode `json:"mode"`
	// Approval may ask for stricter consent than the zone's; a policy left
	// empty takes the one above.
	Approval Approval `json:"approval,omitzero"`
}

// Access is what one worker may reach: a set of zones, each with the
// worker's own mode and approvals. A nil or empty Access is a pure
// worker's: no file access at all. An Access is immutable.
type Access struct {
	zones []Zone // sorted by name
}

// Project returns the access a project's zones give whoever holds them all:
// the ceiling of its top-level workers. zs must pass Check.
func Project(zs []Zone) *Access {
	a := &Access{zones: make([]Zone, len(zs))}
	for i, z := range zs {
		a.zones[i] = withDefaults(z)
	}
	slices.SortFunc(a.zones, func(x, y Zone) int { return strings.Compare(x.Name, y.Name) })
	return a
}

// Resolve returns a top-level worker's access: the zones it declares, from
// the project's. A declaration above the project's mode or approvals is an
// error, as is a zone the project does not define.
func Resolve(project []Zone, decls []Decl) (*Access, error) {
	return Project(project).derive(decls, "agent", "project")
}

// Derive returns a child worker's access from its parent's: only the zones
// the child declares, each no more than the parent holds. A mode above the
// parent's is an error naming both (child requests "rw" on data but parent
// has "ro"), as is an approval looser than the parent's or a zone the
// parent lacks. No declaration gives no access. Derive nests: a child's
// Access derives its own children's.
func (a *Access) Derive(decls []Decl) (*Access, error) {
	return a.derive(decls, "child", "parent")
}

func (a *Access) derive(decls []Decl, child, parent string) (*Access, error) {
	out := &Access{}
	for _, d := range decls {
		if slices.ContainsFunc(out.zones, func(z Zone) bool { return z.Name == d.Name }) {
			return nil, fmt.Errorf("%s declares %s twice", child, d.Name)
		}
		have, ok := a.Zone(d.Name)
		if !ok {
			return nil, fmt.Errorf("%s requests %s, which %s does not have", child, d.Name, parent)
		}
		z, err := narrow(have, d, child, parent)
		if err != nil {
			return nil, err
		}
		out.zones = append(out.zones, z)
	}
	slices.SortFunc(out.zones, func(x, y Zone) int { return strings.Compare(x.Name, y.Name) })
	return out, nil
}

// narrow applies one declaration to the zone as the parent holds it.
func narrow(have Zone, d Decl, child, parent string) (Zone, error) {
	want := d.Mode
	if want == "" {
		want = ReadOnly
	}
	if _, err := ParseMode(string(want)); err != nil {
		return Zone{}, fmt.Errorf("%s on %s: %w", child, d.Name, err)
	}
	if want.rank() > have.Mode.rank() {
		return Zone{}, fmt.Errorf("%s requests %q on %s but %s has %q", child, want, d.Name, parent, have.Mode)
	}
	z := have
	z.Mode = want
	if want == ReadOnly {
		z.Approval = DefaultApproval(ReadOnly)
		return z, nil
	}
	var err error
	if z.Approval.Write, err = tighten(have.Approval.Write, d.Approval.Write, "write", d.Name, child, parent); err != nil {
		return Zone{}, err
	}
	z.Approval.Delete, err = tighten(have.Approval.Delete, d.Approval.Delete, "delete", d.Name, child, parent)
	return z, err
}

// tighten returns the policy a declaration asks for, which may be stricter
// than the parent's but never looser.
func tighten(have, want Policy, op, zone, child, parent string) (Policy, error) {
	if want == "" {
		return have, nil
	}
	if _, err := ParsePolicy(string(want)); err != nil {
		return "", fmt.Errorf("%s on %s: approval %s: %w", child, zone, op, err)
	}
	if want.rank() < have.rank() {
		return "", fmt.Errorf("%s requests %s %q on %s but %s has %q", child, op, want, zone, parent, have)
	}
	return stricter(have, want), nil
}

// Zone returns the zone name as this access holds it.
func (a *Access) Zone(name string) (Zone, bool) {
	if a == nil {
		return Zone{}, false
	}
	i, ok := slices.BinarySearchFunc(a.zones, name, func(z Zone, n string) int { return strings.Compare(z.Name, n) })
	if !ok {
		return Zone{}, false
	}
	return a.zones[i], true
}

// Zones returns the zones, sorted by name.
func (a *Access) Zones() []Zone {
	if a == nil {
		return nil
	}
	return slices.Clone(a.zones)
}

// Names returns the zone names, sorted: what listing / shows.
func (a *Access) Names() []string {
	var out []string
	for _, z := range a.Zones() {
		out = append(out, z.Name)
	}
	return out
}

// Pure reports whether the access reaches no file at all.
func (a *Access) Pure() bool { return a == nil || len(a.zones) == 0 }

// Modes maps each zone name to its mode, for display and tests.
func (a *Access) Modes() map[string]Mode {
	if a.Pure() {
		return nil
	}
	out := map[string]Mode{}
	for _, z := range a.zones {
		out[z.Name] = z.Mode
	}
	return out
}

// withDefaults fills in the approvals z leaves empty: a read-only zone
// allows no change whatever it says, a writable one asks unless told.
func withDefaults(z Zone) Zone {
	def := DefaultApproval(z.Mode)
	if z.Mode != ReadWrite {
		z.Approval = def
		return z
	}
	if z.Approval.Write == "" {
		z.Approval.Write = def.Write
	}
	if z.Approval.Delete == "" {
		z.Approval.Delete = def.Delete
	}
	return z
}
