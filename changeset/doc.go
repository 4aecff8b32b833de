// Package changeset keeps what sandboxed commands write to directories apart
// from the directories themselves, so that the writes can be reviewed,
// applied or thrown away later. It handles files only: mounting is the
// sandbox's job (see corral.Config.Changeset and ChangesetPaths), and
// nothing here starts a process.
//
// A changeset records changes to one or more real directories, its roots:
// the workspace first, then any further writable directories the sandbox
// keeps in it. For each root it holds the upper and work directories of an
// overlayfs mount whose lower layer is the real directory. While a sandbox
// runs, its writes land in the upper directories and the real files stay
// untouched; a later sandbox given the same changeset sees the earlier
// changes in every root and adds to them.
//
//	cs, err := changeset.Open("/var/tmp/review-42")
//	if err != nil {
//		return err
//	}
//	changes, err := cs.List()    // added, modified, deleted, replaced, root by root
//	err = cs.Diff(os.Stdout)     // a unified diff against the originals
//	res, err := cs.Apply(changeset.ApplyOptions{})
//
// A [Change] names its root (Root, an absolute path) and its path relative
// to it (Path); [Change.RealPath] joins them.
//
// # Layout
//
//	DIR/changeset.json           format version 2, the roots, creation time
//	DIR/roots/N/baseline.json    a fingerprint of every entry of root N
//	DIR/roots/N/upper/           overlayfs upper directory: what changed
//	DIR/roots/N/work/            overlayfs work directory: scratch space of the kernel
//
// Roots are numbered from 0 in the order given to [Create], the workspace
// first. No root may lie inside another, and the changeset directory lies
// outside all of them. A changeset of format version 1, which had one root
// and kept baseline.json, upper/ and work/ in DIR itself, is read in place
// as a changeset of one root.
//
// # Reading the upper directory
//
// A file or directory in the upper directory is new or replaces the original.
// A deletion is a whiteout: a character device 0/0, or a zero-size file with
// the xattr user.overlay.whiteout (trusted.* when mounted by the real root).
// A directory with the xattr user.overlay.opaque = "y" hides everything the
// original directory held: it was removed and created again. Directories the
// kernel copied up only to hold a changed file are not changes themselves.
// A copied-up file whose content, permissions and type all equal the
// original's (say, after a bare touch) is not a change either.
//
// # Conflicts
//
// [Create] records a fingerprint of every entry of each root: type, size,
// permissions, modification and change time, inode number. It costs a walk
// with one lstat per entry and about 100 bytes of baseline.json per entry:
// for a tree of 10,000 files, some tens of milliseconds and a megabyte. No
// content is hashed, so even huge trees start quickly; the change time,
// which no program can set, catches an edit that restores size and mtime.
// [Changeset.Apply] compares every original it is about to touch, in every
// root, with its fingerprint and refuses, naming the files and applying
// nothing in any root, when one changed, appeared or disappeared since the
// changeset began; a file that already holds exactly the new content is not
// a conflict, which lets an interrupted apply run again.
//
// # Applying
//
// Apply writes root by root, file by file: each new file is written to a
// temporary file in the same directory and renamed over the original, so an
// interruption leaves every file either old or new. Within a root,
// deletions go first, then new and changed entries parents first, then
// directory permissions. Every path is resolved through an [os.Root] of its
// real directory, so no symlink, old or new, can redirect a write outside
// it. Permission bits and modification times are kept; setuid and setgid
// bits are not applied, so that a sandboxed command cannot plant a
// privileged executable. Once a root is applied its upper directory is
// emptied and its baseline updated: the changeset goes on, empty, over the
// new originals. [ApplyOptions].Select applies only the changes it picks,
// file by file, and discards the others with the rest of the upper
// directory.
//
// # Protected entries
//
// Apply guards the names that make a program on the host run code as a
// sandboxed command's guard does ([Protected]): a changed git directory
// lands through the guard's allowlist (refs, objects, allowed config keys;
// no hooks, no fsmonitor), any other protected entry is written under
// .corral-held/TIME/held-PATH in its root instead of its place, and a
// deletion in one is not applied. [Result] says what was held and dropped;
// [ApplyOptions].AllowPlanting lets named entries land as they are.
//
// # Export
//
// [Changeset.Export] writes the changes as a tar archive in the layer format
// of OCI images: new and changed entries as themselves, a deleted path as an
// empty file named .wh.NAME beside it, a directory that replaced the
// original one holding an empty .wh..wh..opq. With one root, names are
// relative to it: the archive is a layer over that directory. With several,
// names are absolute paths without the leading slash (home/me/proj/main.go):
// a layer over /. [Changeset.Diff] names files the same way. The archive
// starts with a PAX global header whose record CORRAL.roots lists the roots
// as a JSON array; tar programs skip it. [Import] turns such an archive
// back into a changeset over other directories, where it can be listed,
// diffed and applied with the same conflict checks: the first root stands
// for the directory given, each of the others for the directory
// [ImportOptions].Roots maps it to. A root the options do not map fails the
// import with an [UnmappedRootError]: the archive's own list could name
// ~/.ssh. Import refuses names leaving their root (.., absolute, through a
// symlink or file), hard links, devices, fifos, sparse files and short
// data, and drops setuid and setgid bits.
//
// # Reviewing safely
//
// Names, symlink targets and contents come from the sandboxed command, and
// are read on a terminal. [Change.String], [Changeset.Diff] and the errors
// of this package quote names with control characters, bytes that are not
// UTF-8, double quotes or backslashes as git's core.quotePath does
// ([Quote]), so a name is always one line. Diff shows every line through
// [VisibleLine]: escape sequences and other control characters in caret
// notation (^[, ^M), other unprintable characters escaped; such a file's
// hunks no longer apply with patch. A file is binary when it holds a NUL
// anywhere. [Change.Binary], [Change.Unprintable] and [Change.Executable]
// tell a reviewer what to look at twice. JSON keeps the exact names (bytes
// that are not UTF-8 aside, which encoding/json turns into U+FFFD).
//
// # Depth
//
// A command can nest directories deeper than PATH_MAX. Every operation
// works at any depth: paths too long for a system call are reached
// through handles of their directories (/proc/self/fd/N/NAME), and Apply
// and Import keep handles of the directories on their way, so that a chain
// of thousands of directories costs time in proportion to its length.
//
// # Limitations
//
//   - Only the roots are kept apart: writable paths outside them are written
//     directly. A changeset keeps the roots it began with; a sandbox that
//     would overlay other ones is refused.
//   - Two running sandboxes cannot share a changeset: overlayfs does not
//     support two mounts of one upper directory, so [Changeset.Lock] fails
//     with [ErrInUse] instead.
//   - overlayfs mounted in a user namespace cannot rename a directory that
//     exists in the original tree (rename(2) fails with EXDEV; mv copies
//     instead), and mounts beneath the real directory are not visible in it.
//   - Hard links are applied as separate copies; xattrs and ACLs of changed
//     files, and the owner of new ones, are those of the user who applies
//     them (a modified file keeps its group where the user may give it,
//     and as root its owner); sockets, fifos and
//     device nodes are listed but not applied or exported.
//   - The upper directory needs a filesystem with user extended attributes
//     (ext4, xfs, btrfs, tmpfs since Linux 6.6).
//   - overlayfs copies a file up keeping its owner and group, and fails with
//     EOVERFLOW when the sandbox's user namespace does not map them. Root's
//     sandboxes map every id; an unprivileged user's only its own group.
//     [Changeset.UnmappedGroups] finds the user's files of its other
//     groups and [Changeset.CopyUp] copies them up on the host beforehand,
//     as corral.New does.
//   - Long paths go through /proc/self/fd, which must be mounted.
package changeset
