package seccomp

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Also names what a watch's listener stops beyond the write-intent calls.
type Also struct {
	// Reads stops every open, whatever its flags, and the execs: the
	// listener then sees the command read by name (see ReadCalls).
	Reads bool
	// Execs stops execve and execveat: the listener sees the command's
	// first program start before it runs a single instruction.
	Execs bool
	// Binds stops bind, for a listener that performs it: a unix socket's
	// bind creates a name, and its address lies in memory another thread
	// may change, as the descriptor's number may be made to name another
	// socket, before the kernel reads them again.
	Binds bool
	// Umask stops umask: a listener that performs calls for the command
	// follows its umask without reading it from /proc each time.
	Umask bool
}

// calls are the numbers stopped beyond the write calls and the opens.
func (a Also) calls() []uint32 {
	var nrs []uint32
	if a.Reads || a.Execs {
		nrs = execNrs()
	}
	if a.Binds {
		nrs = append(nrs, unix.SYS_BIND)
	}
	if a.Umask {
		nrs = append(nrs, unix.SYS_UMASK)
	}
	return nrs
}

// IsBind tells whether call number nr is bind.
func IsBind(nr uint32) bool { return nr == unix.SYS_BIND }

func execNrs() []uint32 { return []uint32{unix.SYS_EXECVE, unix.SYS_EXECVEAT} }

// IsExec tells whether call number nr starts a program.
func IsExec(nr uint32) bool { return nr == unix.SYS_EXECVE || nr == unix.SYS_EXECVEAT }

// ReadCall is a call that reads, or runs, what a path names, as a watch
// with [Also.Reads] stops it.
type ReadCall struct {
	Name string
	Path PathArg
	// FlagsArg, when not -1, is open's flags argument: the call reads only
	// when they carry none of WriteFlags. openat2 keeps them in memory
	// (HowArg), execs have none.
	FlagsArg int
	// HowArg, when not -1, is openat2's struct open_how argument.
	HowArg int
}

// ReadCalls are the calls a watch with [Also.Reads] stops that read by a
// name, by number: every open (open and openat when their flags ask no
// write; openat2 when the flags in its open_how do not), execve and
// execveat. Not stat, access or readlink: they read no content, Landlock
// refuses none of them, and they are the commonest calls of all. Nil where
// there is no table.
func ReadCalls() map[uint32]ReadCall {
	writes := WriteCalls()
	if writes == nil {
		return nil
	}
	m := map[uint32]ReadCall{
		unix.SYS_EXECVE:   {"execve", PathArg{-1, 0}, -1, -1},
		unix.SYS_EXECVEAT: {"execveat", PathArg{0, 1}, -1, -1},
	}
	for nr, c := range writes {
		switch {
		case c.FlagsArg >= 0:
			m[nr] = ReadCall{c.Name, c.Paths[0], c.FlagsArg, -1}
		case nr == unix.SYS_OPENAT2:
			m[nr] = ReadCall{c.Name, c.Paths[0], -1, 2}
		}
	}
	return m
}

// ExecProgram is a BPF program that stops execve and execveat in a
// listener and allows everything else, to load with [LoadListener] on top
// of the policy's filter where no watch is loaded: the listener then sees
// the command's first program start before it runs. Calls of another
// architecture are allowed here and killed by the policy's filter.
func ExecProgram() ([]unix.SockFilter, error) {
	if notifyArch == 0 {
		return nil, errors.New("seccomp: no listener for this architecture")
	}
	nrs := execNrs()
	// Layout: arch check, load nr, one test per call, then ALLOW and NOTIFY.
	n := 3 + len(nrs)
	allow, notify := n, n+1
	prog := []unix.SockFilter{
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, notifyArch, 1, 2, allow),
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
	}
	for _, nr := range nrs {
		i := len(prog)
		prog = append(prog, jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nr, i, notify, i+1))
	}
	return append(prog,
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF),
	), nil
}
