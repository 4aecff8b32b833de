package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/corralhq/corral/tools"
	"github.com/corralhq/corral/zones"
)

// Files is what the file tools act on. The default is the sandbox's
// workspace ([tools.SandboxFile]); [ZoneFiles] is an agent's zones.
type Files interface {
	Read(ctx context.Context, path string) (string, error)
	Write(ctx context.Context, path, content string) error
	Edit(ctx context.Context, path, old, new string) error
	List(ctx context.Context, path string) ([]tools.Entry, bool, error)
}

// ZoneFiles is the file tools' view of an agent's zones: paths are
// /NAME/..., "/" (and ".") lists the zones, a relative path is taken from
// there, and every change goes through the
// zone's mode and approvals (see package zones): a change a zone holds
// for approval is decided by the FS's Approver. Build the FS with
// [ElicitApprover] to ask the client's user (MCP elicitation); an FS
// without an approver refuses such changes.
func ZoneFiles(f *zones.FS) Files { return zoneFiles{f} }

type zoneFiles struct{ fs *zones.FS }

// zonePath takes a relative path from the zones' root, where list_files
// starts: "." is "/", "data/x" is "/data/x".
func zonePath(p string) string {
	if path.IsAbs(p) {
		return p
	}
	return path.Join("/", p)
}

func (z zoneFiles) Read(_ context.Context, p string) (string, error) {
	p = zonePath(p)
	st, err := z.fs.Stat(p)
	if err != nil {
		return "", err
	}
	switch {
	case st.Dir:
		return "", &fs.PathError{Op: "read", Path: p, Err: errors.New("is a directory")}
	case st.Size > tools.DefaultMaxReadBytes:
		return "", &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("%w: the limit is %d bytes", tools.ErrTooLarge, tools.DefaultMaxReadBytes)}
	}
	b, err := z.fs.Read(p)
	return string(b), err
}

func (z zoneFiles) Write(ctx context.Context, p, content string) error {
	p = zonePath(p)
	return z.fs.Write(ctx, p, []byte(content))
}

func (z zoneFiles) Edit(ctx context.Context, p, old, new string) error {
	p = zonePath(p)
	b, err := z.fs.Read(p)
	if err != nil {
		return err
	}
	out, err := tools.ReplaceUnique(string(b), old, new)
	if err != nil {
		return &fs.PathError{Op: "edit", Path: p, Err: err}
	}
	return z.fs.Write(ctx, p, []byte(out))
}

func (z zoneFiles) List(_ context.Context, p string) ([]tools.Entry, bool, error) {
	p = zonePath(p)
	names, err := z.fs.List(p)
	if err != nil {
		return nil, false, err
	}
	cut := len(names) > tools.DefaultMaxListItems
	if cut {
		names = names[:tools.DefaultMaxListItems]
	}
	var out []tools.Entry
	for _, n := range names {
		e := tools.Entry{Name: n, Type: "other"}
		if st, err := z.fs.Stat(path.Join(p, n)); err == nil {
			e.Size = st.Size
			e.Type = "file"
			if st.Dir {
				e.Type, e.Size = "dir", 0
			}
		}
		out = append(out, e)
	}
	return out, cut, nil
}
