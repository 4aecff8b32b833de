package landlock

import (
	"errors"
	"fmt"
	"os"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Restrict enforces p on the calling thread and on every process it starts
// afterwards, and sets the thread's no_new_privs. Nothing is downgraded: a
// policy the kernel cannot enforce in full is an error.
//
// Only the calling thread is restricted, on purpose. Before ABI 8 a
// process can only restrict its threads one by one, which gives each thread
// a domain of its own, and scoping then stops the other threads from
// signalling the processes this one starts. The sandbox's init needs exactly
// that: the command confined, its other threads free to kill what the
// command leaves behind.
//
// Preconditions: must be called with the OS thread locked.
func Restrict(p *Policy) error {
	attr := ll.RulesetAttr{HandledAccessFS: uint64(p.HandledFS), HandledAccessNet: p.HandledNet, Scoped: p.Scoped}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return &os.SyscallError{Syscall: "landlock_create_ruleset", Err: err}
	}
	defer unix.Close(fd)
	for _, r := range p.Rules {
		if err := addRule(fd, r); err != nil {
			return err
		}
	}
	for _, port := range p.ConnectTCP {
		attr := ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(port)}
		if err := ll.LandlockAddNetPortRule(fd, &attr, 0); err != nil {
			return &os.SyscallError{Syscall: fmt.Sprintf("landlock_add_rule(tcp port %d)", port), Err: err}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(NO_NEW_PRIVS)", err)
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return &os.SyscallError{Syscall: "landlock_restrict_self", Err: err}
	}
	return nil
}

// addRule grants r.Access beneath r.Path. The path is opened O_PATH, which
// follows symlinks: Build leaves symlinks out of carved directories.
func addRule(ruleset int, r Rule) error {
	fd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		// Removed since Build saw it (an entry of a carved directory):
		// there is nothing left to grant.
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "landlock: open", Path: r.Path, Err: err}
	}
	defer unix.Close(fd)
	attr := ll.PathBeneathAttr{AllowedAccess: uint64(r.Access), ParentFd: fd}
	if err := ll.LandlockAddPathBeneathRule(ruleset, &attr, 0); err != nil {
		if errors.Is(err, unix.EINVAL) {
			err = fmt.Errorf("%w (rights %v on a file that is not a directory?)", err, r.Access)
		}
		return &os.PathError{Op: "landlock_add_rule", Path: r.Path, Err: err}
	}
	return nil
}
