package zones

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	a := Project(project())
	tests := []struct {
		op      Op
		path    string
		want    Decision
		wantErr string
	}{
		{OpWrite, "/drafts/a.txt", Allow, ""},
		{OpDelete, "/drafts/a.txt", Allow, ""},
		{OpWrite, "/data/a.txt", NeedsApproval, ""},
		{OpDelete, "/data/x/y", NeedsApproval, ""},
		{OpWrite, "/final/report.md", NeedsApproval, ""},
		{OpDelete, "/final/report.md", 0, "write /final/report.md: operation not permitted"},
		{OpWrite, "/input/a", 0, "write /input/a: read-only file system"},
		{OpDelete, "/input/a", 0, "write /input/a: read-only file system"},
		{OpWrite, "/", 0, "write /: read-only file system"},
		{OpWrite, "/newdir", 0, "write /newdir: read-only file system"},
		{OpWrite, "/newdir/a", 0, "write /newdir/a: no such file or directory"},
		{OpDelete, "/data", 0, "write /data: read-only file system"},
		{OpWrite, "/data/../input/a", 0, "write /data/../input/a: read-only file system"},
		{OpWrite, "data/a", 0, "resolve data/a: invalid argument"},
	}
	for _, tt := range tests {
		t.Run(string(tt.op)+" "+tt.path, func(t *testing.T) {
			d, err := a.Decide(tt.op, "write", tt.path)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, d)
		})
	}
	_, err := a.Decide(OpDelete, "remove", "/final/x")
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.ErrorIs(t, err, ErrBlocked)
	_, err = a.Decide(OpWrite, "open", "/input/x")
	assert.ErrorIs(t, err, syscall.EROFS)
}

func TestAuthorize(t *testing.T) {
	a := Project(project())
	var asked []Request
	yes := ApproverFunc(func(_ context.Context, r Request) (bool, error) { asked = append(asked, r); return true, nil })
	no := ApproverFunc(func(_ context.Context, r Request) (bool, error) { asked = append(asked, r); return false, nil })
	broken := ApproverFunc(func(context.Context, Request) (bool, error) { return true, errors.New("terminal closed") })
	ctx := context.Background()

	req := Request{Op: OpWrite, Path: "/data/a", Size: 3}
	require.NoError(t, a.Authorize(ctx, yes, "write", req))
	require.Equal(t, []Request{req}, asked)
	err := a.Authorize(ctx, no, "write", req)
	require.EqualError(t, err, "write /data/a: permission denied: the change was not approved")
	assert.ErrorIs(t, err, fs.ErrPermission)
	err = a.Authorize(ctx, nil, "write", req)
	require.ErrorIs(t, err, ErrRefused, "no approver refuses")
	err = a.Authorize(ctx, broken, "write", req)
	require.ErrorIs(t, err, ErrRefused, "an approver's error refuses")

	asked = nil
	require.NoError(t, a.Authorize(ctx, no, "write", Request{Op: OpWrite, Path: "/drafts/a"}), "preApproved asks no one")
	require.ErrorIs(t, a.Authorize(ctx, yes, "remove", Request{Op: OpDelete, Path: "/final/a"}), ErrBlocked, "blocked asks no one")
	assert.Empty(t, asked)
}

func TestSplit(t *testing.T) {
	for in, want := range map[string][2]string{
		"/":                {"", "."},
		"/data":            {"data", "."},
		"/data/":           {"data", "."},
		"/data/a/b":        {"data", "a/b"},
		"/data/../../etc":  {"etc", "."},
		"//data//a/./b/..": {"data", "a"},
	} {
		name, rel, err := Split(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, [2]string{name, rel}, in)
	}
	for _, bad := range []string{"", "data", "./data", "/a\x00b"} {
		_, _, err := Split(bad)
		assert.ErrorIs(t, err, fs.ErrInvalid, "%q", bad)
	}
}

// fsFixture makes the project's zones on disk, with a secret beside them.
func fsFixture(t *testing.T) (zs []Zone, secret string) {
	t.Helper()
	root := t.TempDir()
	for _, z := range project() {
		z.Path = filepath.Join(root, z.Name)
		require.NoError(t, os.Mkdir(z.Path, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(z.Path, "a.txt"), []byte("one\ntwo\n"), 0o644))
		zs = append(zs, z)
	}
	secret = filepath.Join(root, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
	return zs, secret
}

func TestFS(t *testing.T) {
	zs, secret := fsFixture(t)
	root := filepath.Dir(secret)
	var asked []Request
	decide := true
	ap := ApproverFunc(func(_ context.Context, r Request) (bool, error) { asked = append(asked, r); return decide, nil })
	a, err := Resolve(zs, []Decl{{Name: "data", Mode: ReadWrite}, {Name: "input"}, {Name: "drafts", Mode: ReadWrite}, {Name: "final", Mode: ReadWrite}})
	require.NoError(t, err)
	f := NewFS(a, ap)
	ctx := context.Background()

	names, err := f.List("/")
	require.NoError(t, err)
	assert.Equal(t, []string{"data", "drafts", "final", "input"}, names)
	names, err = f.List("/input")
	require.NoError(t, err)
	assert.Equal(t, []string{"a.txt"}, names)
	b, err := f.Read("/input/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", string(b))

	// ask: the approver sees a diff and decides.
	require.NoError(t, f.Write(ctx, "/data/a.txt", []byte("one\nthree\n")))
	require.Len(t, asked, 1)
	assert.Equal(t, OpWrite, asked[0].Op)
	assert.Equal(t, "/data/a.txt", asked[0].Path)
	assert.Contains(t, asked[0].Diff, "-two\n+three\n")
	assert.NotContains(t, asked[0].Diff, root, "the diff names the worker's path")
	decide = false
	err = f.Write(ctx, "/data/new/b.txt", []byte("x"))
	require.EqualError(t, err, "write /data/new/b.txt: permission denied: the change was not approved")
	assert.NoDirExists(t, filepath.Join(root, "data", "new"))
	err = f.Delete(ctx, "/data/a.txt")
	require.ErrorIs(t, err, ErrRefused)
	assert.FileExists(t, filepath.Join(root, "data", "a.txt"))
	decide = true
	require.NoError(t, f.Write(ctx, "/data/new/b.bin", []byte("a\x00b")))
	assert.Equal(t, Request{Op: OpWrite, Path: "/data/new/b.bin", Size: 3}, asked[len(asked)-1], "a binary file shows its size")
	require.NoError(t, f.Delete(ctx, "/data/new/b.bin"))
	assert.NoFileExists(t, filepath.Join(root, "data", "new", "b.bin"))

	// preApproved and blocked ask no one.
	asked = nil
	require.NoError(t, f.Write(ctx, "/drafts/d.txt", []byte("d")))
	require.NoError(t, f.Mkdir(ctx, "/drafts/sub/dir"))
	require.NoError(t, f.Delete(ctx, "/drafts/d.txt"))
	require.EqualError(t, f.Delete(ctx, "/final/a.txt"), "remove /final/a.txt: operation not permitted")
	assert.FileExists(t, filepath.Join(root, "final", "a.txt"))
	assert.Empty(t, asked)

	// The errors an ordinary file system gives.
	for _, tc := range []struct {
		err  error
		want string
	}{
		{f.Write(ctx, "/input/a.txt", nil), "write /input/a.txt: read-only file system"},
		{f.Write(ctx, "/x.txt", nil), "write /x.txt: read-only file system"},
		{f.Mkdir(ctx, "/newtop"), "mkdir /newtop: read-only file system"},
		{errOf(f.Read("/nothere/a")), "read /nothere/a: no such file or directory"},
		{errOf(f.Read("/input/nothere")), "read /input/nothere: no such file or directory"},
		{errOf(f.Read("/")), "read /: is a directory"},
		{errOf(f.List("/input/a.txt")), "readdir /input/a.txt: not a directory"},
		{errOf(f.Read("/input/../../secret")), "read /input/../../secret: no such file or directory"},
	} {
		require.Error(t, tc.err)
		assert.Contains(t, tc.err.Error(), tc.want[:strings.LastIndex(tc.want, ":")])
		assert.NotContains(t, strings.ToLower(tc.err.Error()), "zone")
		assert.NotContains(t, tc.err.Error(), root)
	}

	// A symlink out of a zone leads nowhere; the same read by path on the
	// host works (the control).
	require.NoError(t, os.Symlink(secret, filepath.Join(root, "data", "link")))
	_, err = f.Read("/data/link")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), root)
	host, err := os.ReadFile(filepath.Join(root, "data", "link"))
	require.NoError(t, err)
	assert.Equal(t, "s3cret", string(host))
	require.Error(t, f.Write(ctx, "/data/link", []byte("x")))
	host, _ = os.ReadFile(secret)
	assert.Equal(t, "s3cret", string(host))
}

// A worker that declared nothing reaches nothing.
func TestFSPure(t *testing.T) {
	zs, _ := fsFixture(t)
	a, err := Resolve(zs, nil)
	require.NoError(t, err)
	f := NewFS(a, ApproverFunc(func(context.Context, Request) (bool, error) { return true, nil }))
	ctx := context.Background()
	names, err := f.List("/")
	require.NoError(t, err)
	assert.Empty(t, names)
	for _, err := range []error{
		errOf(f.Read("/data/a.txt")), errOf(f.List("/data")), errOf(f.Stat("/data")),
		f.Write(ctx, "/data/a.txt", nil), f.Delete(ctx, "/data/a.txt"), f.Mkdir(ctx, "/data/d"),
	} {
		require.Error(t, err)
		assert.NotContains(t, strings.ToLower(err.Error()), "zone")
	}
	// Control: the worker with the zone reads the same file.
	full, err := Resolve(zs, []Decl{{Name: "data"}})
	require.NoError(t, err)
	_, err = NewFS(full, nil).Read("/data/a.txt")
	require.NoError(t, err)
}

func errOf[T any](_ T, err error) error { return err }
