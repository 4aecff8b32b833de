// Package zones gives an agent's workers file access by named zones: the
// project defines directories ([zones.NAME] path, mode), each worker
// declares the ones it needs, and a worker it delegates to gets only what
// it declares, never more than its parent holds.
//
//	project:  data = /srv/proj/data (rw), input = /srv/proj/in (ro)
//	worker:   zones = [{ name = "data", mode = "rw" }]
//	it sees:  /data, writable; nothing else
//
// # Capability and consent
//
// A zone's Mode ("ro" or "rw") is what a worker can do; its Approval is
// what needs consent: for writes and for deletions separately,
// PreApproved, Ask (the default in a writable zone) or Blocked. Ask hands
// the change to the caller's [Approver] with the worker's path and a diff
// (or the size of a file that is not text).
//
// # Delegation
//
// [Resolve] turns a top-level worker's declarations into its [Access],
// with the project's zones as the ceiling; [Access.Derive] does the same
// for a child with its parent's Access, to any depth. A child declaring
// nothing gets nothing (a pure worker). A mode above the parent's, an
// approval looser than the parent's, or a zone the parent lacks is an
// error naming both sides:
//
//	child requests "rw" on data but parent has "ro"
//
// # What the worker sees
//
// A worker that declares nothing (a pure worker) reaches no file: its
// file tool refuses everything, and its commands run in a sandbox without
// a workspace, starting in their private /tmp, with every zone and its
// scratch directory hidden (see [Access.SandboxConfig]).
//
// Its file tool (tools.ZoneFile, built on a [Worker]) lists the zone names
// at "/", takes paths /NAME/..., and fails with an ordinary file system's
// errors ("read-only file system", "no such file or directory",
// "operation not permitted"); they name the worker's path, never the
// host's, and never speak of zones. It decides each change here
// ([Access.Decide], [Access.Authorize]) and does the I/O in
// [Worker.FileSandbox] of the zone, so it reaches what the worker's
// commands reach. What commands left waiting for Review is part of that
// view ([Worker.Pending]): the tool reads and lists it while the Approver
// decides, and refuses to change a path where it waits ([ErrWaiting]).
// [FS] is the same view done in-process, for callers without a sandbox:
// it knows the zones' modes and approvals but not the sandbox's rules
// inside a zone (hidden paths); a write or mkdir of a protected entry
// (changeset.Protected, and a HEAD) it refuses with [ErrProtected], since
// it writes outside the sandbox's guard. The check holds for what is
// written: the directory is held and found again at its canonical path,
// and the file is never reached through a symlink swapped in meanwhile.
//
// # Several workers
//
// A worker's changeset begins again over the zones before each command
// ([Worker.Command]), so another worker's change that landed first is what
// the command sees. A change landing on a file while a command works on
// it makes [Worker.Review] apply nothing and return a [*ConflictError];
// [Worker.Discard] drops the waiting changes.
//
// # Limitations
//
// [Worker] builds sandboxes; the rest of the package decides and does
// file I/O in-process. A zone, and a pure worker's private /tmp, need a
// mount namespace (the full rung).
// [Access.SandboxConfig] hides only zones whose directories exist:
// [MakeZones] (which [NewWorker] calls) creates the missing ones.
package zones
