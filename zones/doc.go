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
// [FS] is the file tools' view: "/" lists the zone names, paths are
// /NAME/..., and errors are an ordinary file system's ("read-only file
// system", "no such file or directory", "operation not permitted"); they
// name the worker's path, never the host's, and never speak of zones.
//
// # Limitations
//
// This package decides and does file I/O in-process; it starts no
// sandbox. Commands a worker runs are contained by the sandbox built from
// its Access, which shows each zone at /NAME.
package zones
