package seccomp

// PathArg says where a system call the notify program watches takes a path:
// the argument holding the pointer, and the one holding the directory
// descriptor it is relative to (-1: the working directory, as for open).
type PathArg struct {
	Dir  int
	Path int
}

// WriteCall is a system call that creates, changes or removes a name, as
// the notify program and its listener see it.
type WriteCall struct {
	Name string
	// Paths are the names it writes, in argument order: rename's two,
	// symlink's link (never its target).
	Paths []PathArg
	// FlagsArg, when not -1, is open's flags argument: the call is watched
	// only when it carries one of WriteFlags. openat2 keeps its flags in
	// memory a filter cannot read, so it is always watched (FlagsArg -1)
	// and the listener reads them.
	FlagsArg int
}
