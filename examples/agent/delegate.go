package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/tools"
	"github.com/corralhq/corral/zones"
)

// Delegation is what the delegation part of the example saw.
type Delegation struct {
	ChildSees    []string        // what the child's file tools list at /
	ChildShell   string          // what the child's command printed
	FileResults  []string        // each file tool call and its outcome
	Reviewed     *zones.Reviewed // the child's command's changes
	TooMuch      string          // the error of a child asking more than its parent has
	PureSees     []string        // what a child that declared nothing lists at /
	ZoneContents map[string]string
}

// delegate shows a parent agent handing work to a child worker: the child
// gets only the zones it declares, never more than the parent holds, and
// every change that needs consent goes to an approver that prints it and
// decides (here by rule: Markdown yes, anything else no).
func delegate(ctx context.Context, w io.Writer) (*Delegation, error) {
	dir, err := os.MkdirTemp("", "corral-zones-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	project, err := makeProject(dir)
	if err != nil {
		return nil, err
	}
	approver := zones.ApproverFunc(func(_ context.Context, r zones.Request) (bool, error) {
		ok := strings.HasSuffix(r.Path, ".md")
		fmt.Fprintf(w, "  approver: %s %s (%d bytes)\n", r.Op, r.Path, r.Size)
		for _, line := range strings.Split(strings.TrimRight(r.Diff, "\n"), "\n") {
			if line != "" {
				fmt.Fprintf(w, "  approver:   %s\n", line)
			}
		}
		fmt.Fprintf(w, "  approver: %s\n", map[bool]string{true: "approved", false: "refused"}[ok])
		return ok, nil
	})
	base := func(name string) (zones.WorkerConfig, error) {
		ws := filepath.Join(dir, name, "scratch")
		if err := os.MkdirAll(ws, 0o755); err != nil {
			return zones.WorkerConfig{}, err
		}
		return zones.WorkerConfig{Base: corral.Config{Workspace: ws}, Project: project, Approver: approver,
			Changeset: filepath.Join(dir, name, "changes")}, nil
	}

	fmt.Fprintln(w, "\n== delegation: parent holds data (rw), reports (rw), input (ro)")
	access, err := zones.Resolve(project, []zones.Decl{{Name: "data", Mode: zones.ReadWrite}, {Name: "reports", Mode: zones.ReadWrite}, {Name: "input"}})
	if err != nil {
		return nil, err
	}
	pc, err := base("parent")
	if err != nil {
		return nil, err
	}
	parent, err := zones.NewWorker(access, pc)
	if err != nil {
		return nil, err
	}
	defer parent.Close()

	d := &Delegation{ZoneContents: map[string]string{}}
	cc, err := base("child")
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(w, "child declares { data: rw }")
	child, err := parent.Child([]zones.Decl{{Name: "data", Mode: zones.ReadWrite}}, cc)
	if err != nil {
		return nil, err
	}
	defer child.Close()
	if err := childWork(ctx, w, child, d); err != nil {
		return nil, err
	}

	fmt.Fprintln(w, "child declares { input: rw }")
	_, err = parent.Child([]zones.Decl{{Name: "input", Mode: zones.ReadWrite}}, cc)
	d.TooMuch = fmt.Sprint(err)
	fmt.Fprintf(w, "  refused: %v\n", err)

	fmt.Fprintln(w, "child declares nothing")
	pure, err := parent.Access().Derive(nil)
	if err != nil {
		return nil, err
	}
	d.PureSees, _ = zones.NewFS(pure, nil).List("/")
	fmt.Fprintf(w, "  list / → %q\n", d.PureSees)

	for _, f := range []string{"summary.md", "cleanup.sh", "raw.csv", "table.csv", "notes.md"} {
		if b, err := os.ReadFile(filepath.Join(dir, "data", f)); err == nil {
			d.ZoneContents[f] = string(b)
		}
	}
	return d, nil
}

// makeProject lays out the project's zones: data (ask to write, deletes
// blocked), reports (everything preApproved) and input (read-only).
func makeProject(dir string) ([]zones.Zone, error) {
	project := []zones.Zone{
		{Name: "data", Mode: zones.ReadWrite, Approval: zones.Approval{Write: zones.Ask, Delete: zones.Blocked}},
		{Name: "reports", Mode: zones.ReadWrite, Approval: zones.Approval{Write: zones.PreApproved, Delete: zones.PreApproved}},
		{Name: "input", Mode: zones.ReadOnly},
	}
	for i := range project {
		project[i].Path = filepath.Join(dir, project[i].Name)
		if err := os.Mkdir(project[i].Path, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "raw.csv"), []byte("x,y\n1,2\n"), 0o644); err != nil {
		return nil, err
	}
	return project, zones.Check(project)
}

// childWork is what the child does with its file tool and its shell. The
// file tool does its I/O in a sandbox of the child's, so it reaches what
// the child's commands reach.
func childWork(ctx context.Context, w io.Writer, child *zones.Worker, d *Delegation) error {
	fs, err := tools.NewZoneFile(child)
	if err != nil {
		return err
	}
	top, _, err := fs.List(ctx, "/")
	if err != nil {
		return err
	}
	for _, e := range top {
		d.ChildSees = append(d.ChildSees, e.Name)
	}
	fmt.Fprintf(w, "  list / → %q\n", d.ChildSees)
	for _, call := range []struct {
		what string
		do   func() error
	}{
		{"write /data/summary.md", func() error { return fs.Write(ctx, "/data/summary.md", "# Summary\n") }},
		{"write /data/cleanup.sh", func() error { return fs.Write(ctx, "/data/cleanup.sh", "rm -rf /data\n") }},
		{"delete /data/raw.csv", func() error { return fs.Delete(ctx, "/data/raw.csv") }},
		{"read /reports/q3.md", func() error { _, err := fs.Read(ctx, "/reports/q3.md"); return err }},
	} {
		res := "ok"
		if err := call.do(); err != nil {
			res = err.Error()
		}
		d.FileResults = append(d.FileResults, call.what+": "+res)
		fmt.Fprintf(w, "  file tool %s → %s\n", call.what, res)
	}

	fmt.Fprintln(w, "  shell: ls /data; write table.csv and notes.md; rm raw.csv")
	cmd := child.Command(ctx, "sh", "-c", `echo a,b > /data/table.csv; echo notes > /data/notes.md; rm /data/raw.csv; ls /data`)
	out, err := cmd.CombinedOutput()
	d.ChildShell = string(out)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fmt.Fprintf(w, "  shell: %s\n", line)
	}
	if err != nil {
		return fmt.Errorf("child's command: %w", err)
	}
	rv, err := child.Review(ctx)
	if err != nil {
		return err
	}
	d.Reviewed = rv
	for _, r := range rv.Applied {
		fmt.Fprintf(w, "  applied: %s %s\n", r.Op, r.Path)
	}
	for _, r := range rv.Blocked {
		fmt.Fprintf(w, "  blocked: %s %s\n", r.Op, r.Path)
	}
	return nil
}
