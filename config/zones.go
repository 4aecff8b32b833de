package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/corralhq/corral/zones"
)

// zoneDoc is one [zones.NAME] table.
type zoneDoc struct {
	Path     *string      `toml:"path"`
	Mode     *string      `toml:"mode"`
	Approval *approvalDoc `toml:"approval"`
}

// declDoc is one entry of an agent's zones = [{ name, mode }].
type declDoc struct {
	Name     *string      `toml:"name"`
	Mode     *string      `toml:"mode"`
	Approval *approvalDoc `toml:"approval"`
}

type approvalDoc struct {
	Write  *string `toml:"write"`
	Delete *string `toml:"delete"`
}

// projectZones resolves the [zones.NAME] tables, sorted by name, or the
// default zones when the file defines none.
func (r *resolver) projectZones(docs map[string]zoneDoc) ([]zones.Zone, error) {
	if len(docs) == 0 {
		return zones.Defaults(r.dir), nil
	}
	var out []zones.Zone
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		key := "zones." + name
		if err := zones.CheckName(name); err != nil {
			return nil, r.errorf(key, "%v", err)
		}
		d := docs[name]
		if d.Path == nil {
			return nil, r.errorf(key+".path", "required")
		}
		p, err := r.path(key+".path", *d.Path)
		if err != nil {
			return nil, err
		}
		z := zones.Zone{Name: name, Path: p, Mode: zones.ReadOnly}
		if d.Mode != nil {
			if z.Mode, err = zones.ParseMode(*d.Mode); err != nil {
				return nil, r.errorf(key+".mode", "%v", err)
			}
		}
		if z.Approval, err = r.approval(key+".approval", d.Approval); err != nil {
			return nil, err
		}
		out = append(out, z)
	}
	return out, nil
}

func (r *resolver) approval(key string, d *approvalDoc) (a zones.Approval, err error) {
	if d == nil {
		return a, nil
	}
	if d.Write != nil {
		if a.Write, err = zones.ParsePolicy(*d.Write); err != nil {
			return a, r.errorf(key+".write", "%v", err)
		}
	}
	if d.Delete != nil {
		if a.Delete, err = zones.ParsePolicy(*d.Delete); err != nil {
			return a, r.errorf(key+".delete", "%v", err)
		}
	}
	return a, nil
}

// decls resolves an agent's zone declarations and checks them against the
// project's zones, naming the first one that asks for more than they give.
func (r *resolver) decls(key string, docs []declDoc, project []zones.Zone) ([]zones.Decl, error) {
	var out []zones.Decl
	for i, d := range docs {
		k := fmt.Sprintf("%s[%d]", key, i)
		if d.Name == nil {
			return nil, r.errorf(k+".name", "required")
		}
		decl := zones.Decl{Name: *d.Name}
		if d.Mode != nil {
			m, err := zones.ParseMode(*d.Mode)
			if err != nil {
				return nil, r.errorf(k+".mode", "%v", err)
			}
			decl.Mode = m
		}
		var err error
		if decl.Approval, err = r.approval(k+".approval", d.Approval); err != nil {
			return nil, err
		}
		out = append(out, decl)
		if _, err := zones.Resolve(project, out); err != nil {
			return nil, r.errorf(k, "%v", err)
		}
	}
	return out, nil
}

// Access returns the zones agent id may reach: those its sandbox table
// declares, from the file's Zones. An agent that declares none gets an
// empty Access: no file access.
func (c *Config) Access(id string) (*zones.Access, error) {
	a, ok := c.Agent(id)
	if !ok {
		return nil, fmt.Errorf("no agent %q in %s", id, c.File)
	}
	return zones.Resolve(c.Zones, a.Sandbox.Zones)
}
