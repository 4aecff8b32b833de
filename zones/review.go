package zones

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/corralhq/corral/changeset"
)

// Reviewed is what a review of a command's changes did, change by change,
// each named by the worker's path.
type Reviewed struct {
	// Applied landed in their zones.
	Applied []Request `json:"applied"`
	// Refused were not approved and are discarded.
	Refused []Request `json:"refused"`
	// Blocked were refused by the zone's policy, without asking: deletions
	// in a zone whose deletes are blocked. Discarded too.
	Blocked []Request `json:"blocked"`
	// Guarded says, one line each, what approved changes to protected
	// entries became instead of landing as they are: held under
	// .corral-held, or left out of a git directory's merge (see
	// changeset.Result). Those changes are among Applied too.
	Guarded []string `json:"guarded,omitempty"`
}

// maxReviewDiff bounds the files shown as a diff; larger ones show their
// size.
const maxReviewDiff = 1 << 20

// Review takes the changes a command left in cs, whose roots are zones of
// a, to the Approver one file at a time as the zones' policies say, then
// applies the approved ones and discards the rest. A deletion in a zone
// whose delete policy is Blocked is refused and reported, the rest still
// applies. A new or changed directory is applied with the first change
// approved beneath it (an empty new directory is asked for itself); a
// deleted directory only when every deletion beneath it is approved. A nil
// ap refuses whatever needs approval. Changes in a directory of cs that is
// not a zone (the worker's own workspace, overlaid with the zones) apply
// without asking, as they do when nothing is reviewed. When a file changed
// was also changed by another writer since the changeset began (another
// worker's reviewed changes to the same zone, say), nothing applies and
// the error is a *ConflictError.
func (a *Access) Review(ctx context.Context, cs *changeset.Changeset, ap Approver) (*Reviewed, error) {
	changes, err := cs.List()
	if err != nil {
		return nil, err
	}
	upper := map[string]string{}
	for _, r := range cs.Roots() {
		upper[r.Path] = r.Upper
	}
	rv := &Reviewed{}
	ok := map[string]bool{} // RealPath → approved
	dirs := []changeset.Change{}
	for _, ch := range changes {
		if ch.Type == changeset.Dir && ch.Status != changeset.Deleted || ch.OldType == changeset.Dir && ch.Status == changeset.Deleted {
			dirs = append(dirs, ch)
			continue
		}
		if _, zone := a.zoneAt(ch.Root); !zone {
			// The worker's own workspace: writable without consent, as
			// it is when nothing is reviewed.
			ok[ch.RealPath()] = true
			continue
		}
		req, err := a.request(ch, upper[ch.Root])
		if err != nil {
			return nil, err
		}
		ok[ch.RealPath()] = a.verdict(ctx, ap, ch, req, rv)
	}
	// Deepest first: a deleted directory needs its contents' verdicts.
	for i := len(dirs) - 1; i >= 0; i-- {
		ch := dirs[i]
		if _, zone := a.zoneAt(ch.Root); !zone {
			ok[ch.RealPath()] = true
			continue
		}
		req, err := a.request(ch, "")
		if err != nil {
			return nil, err
		}
		ok[ch.RealPath()] = a.dirVerdict(ctx, ap, ch, req, ok, rv)
	}
	res, err := cs.Apply(changeset.ApplyOptions{Select: func(ch changeset.Change) bool { return ok[ch.RealPath()] }})
	if err != nil {
		return nil, a.conflict(err, rv)
	}
	rv.Guarded = append(slices.Clone(res.Held), res.Dropped...)
	return rv, nil
}

// request describes ch as the worker's change.
func (a *Access) request(ch changeset.Change, upper string) (Request, error) {
	z, found := a.zoneAt(ch.Root)
	if !found {
		return Request{}, fmt.Errorf("review: %s is not a zone of this worker", ch.Root)
	}
	req := Request{Op: OpWrite, Path: changeset.Quote(path.Join("/", z.Name, ch.Path)), Size: ch.Size, Executable: ch.Executable()}
	if ch.Type == changeset.Symlink && ch.Status != changeset.Deleted {
		req.Target = changeset.Quote(ch.Target)
	}
	switch {
	case ch.Status == changeset.Deleted:
		req.Op, req.Size, req.Dir = OpDelete, ch.OldSize, ch.OldType == changeset.Dir
	case ch.Type == changeset.Dir:
		req.Dir = true
	case ch.Type == changeset.File && !ch.Binary && ch.Size <= maxReviewDiff && ch.OldSize <= maxReviewDiff && upper != "":
		req.Diff = fileDiff(ch, upper, req.Path)
	}
	return req, nil
}

func (a *Access) zoneAt(root string) (Zone, bool) {
	for _, z := range a.Zones() {
		if z.Path == root {
			return z, true
		}
	}
	return Zone{}, false
}

// verdict decides one change of a file, symlink or other entry.
func (a *Access) verdict(ctx context.Context, ap Approver, ch changeset.Change, req Request, rv *Reviewed) bool {
	z, _ := a.zoneAt(ch.Root)
	pol := z.Approval.For(req.Op)
	if ch.Status == changeset.Replaced {
		// Something was removed to put this there.
		pol = stricter(z.Approval.Write, z.Approval.Delete)
	}
	switch pol {
	case PreApproved:
		rv.Applied = append(rv.Applied, req)
		return true
	case Ask:
		if ap != nil {
			if yes, err := ap.Approve(ctx, req); err == nil && yes {
				rv.Applied = append(rv.Applied, req)
				return true
			}
		}
		rv.Refused = append(rv.Refused, req)
		return false
	}
	rv.Blocked = append(rv.Blocked, req)
	return false
}

// dirVerdict decides a directory from what was decided beneath it.
func (a *Access) dirVerdict(ctx context.Context, ap Approver, ch changeset.Change, req Request, ok map[string]bool, rv *Reviewed) bool {
	prefix := ch.RealPath() + "/"
	anyOK, all, some := false, true, false
	for p, yes := range ok {
		if strings.HasPrefix(p, prefix) {
			some = true
			anyOK = anyOK || yes
			all = all && yes
		}
	}
	z, _ := a.zoneAt(ch.Root)
	switch {
	case ch.Status == changeset.Replaced && z.Approval.Delete == Blocked:
		// A directory put where a file was deleted: it cannot land, nor
		// anything in it.
		rv.Blocked = append(rv.Blocked, req)
		for p := range ok {
			if strings.HasPrefix(p, prefix) {
				ok[p] = false
			}
		}
		rv.Applied = slices.DeleteFunc(rv.Applied, func(r Request) bool { return strings.HasPrefix(r.Path, req.Path+"/") })
		return false
	case ch.Status == changeset.Deleted && some && !all:
		rv.Refused = append(rv.Refused, req) // it cannot go while something stays in it
		return false
	case ch.Status == changeset.Deleted:
		return a.verdict(ctx, ap, ch, req, rv)
	case anyOK:
		return true // made for what was approved in it
	case some:
		return false // nothing in it was approved
	}
	return a.verdict(ctx, ap, ch, req, rv)
}

// fileDiff is a unified diff of a changed text file, safe to print on a
// terminal.
func fileDiff(ch changeset.Change, upper, name string) string {
	var old []byte
	if ch.Status != changeset.Added && ch.OldType == changeset.File {
		old, _ = readIn(ch.Root, ch.Path)
	}
	cur, err := readIn(upper, ch.Path)
	if err != nil {
		return ""
	}
	if strings.IndexByte(string(old), 0) >= 0 {
		return ""
	}
	d := udiff.Unified("a"+name, "b"+name, string(old), string(cur))
	lines := strings.Split(d, "\n")
	for i, l := range lines {
		lines[i] = changeset.VisibleLine(l)
	}
	return strings.Join(lines, "\n")
}

// readIn reads rel inside dir without leaving it.
func readIn(dir, rel string) ([]byte, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(rel)
}
