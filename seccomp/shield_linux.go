package seccomp

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Shield is a second, small filter that keeps a command's hands off other
// processes: the ones the policy's filter cannot name because their ids are
// known only when the sandbox starts (its init), and, where the command
// shares the host's processes, everything the kernel lets a process do to
// another of the same user without Landlock's say.
//
// It refuses with EPERM:
//   - kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo and pidfd_open
//     aimed at one of IDs (kill also at the process group of one);
//   - prlimit64 setting the limits of another process (a pid and a new
//     limit): an init whose own limits were lowered would fail mid-merge;
//   - with Host, setpriority, ioprio_set, sched_setaffinity,
//     sched_setscheduler, sched_setparam and sched_setattr aimed at any
//     process but the caller itself, which on the host could slow or starve
//     the user's other programs.
//
// Calls through another architecture's entry points kill the process, as
// the policy's filter does.
type Shield struct {
	IDs  []int
	Host bool
}

// Load installs the shield on the calling thread, which the processes it
// starts inherit. Like Load, it sets no_new_privs.
//
// Preconditions: must be called with the OS thread locked.
func (s Shield) Load() error {
	prog, err := s.program(runtime.GOARCH)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(NO_NEW_PRIVS)", err)
	}
	if err := setFilter(prog); err != nil {
		return os.NewSyscallError("seccomp(SET_MODE_FILTER)", err)
	}
	return nil
}

// Return values (the offsets into struct seccomp_data are notify's).
const (
	shieldAllow = unix.SECCOMP_RET_ALLOW
	shieldKill  = unix.SECCOMP_RET_KILL_PROCESS
	shieldEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	x32Bit      = 0x4000_0000
)

// shieldArch are the architectures the shield is built for, with their
// audit token and the numbers of the calls it looks at.
var shieldArch = map[string]struct {
	audit uint32
	calls map[string]uint32
}{
	"amd64": {unix.AUDIT_ARCH_X86_64, map[string]uint32{
		"kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
		"pidfd_open": 434, "prlimit64": 302, "setpriority": 141, "ioprio_set": 251,
		"sched_setaffinity": 203, "sched_setscheduler": 144, "sched_setparam": 142, "sched_setattr": 314,
	}},
	"arm64": {unix.AUDIT_ARCH_AARCH64, map[string]uint32{
		"kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
		"pidfd_open": 434, "prlimit64": 261, "setpriority": 140, "ioprio_set": 30,
		"sched_setaffinity": 122, "sched_setscheduler": 119, "sched_setparam": 118, "sched_setattr": 274,
	}},
}

// cmp is one comparison of the low or high 32 bits of an argument; a
// clause refuses the call when all its comparisons hold.
type cmp struct {
	arg  int
	high bool
	ne   bool // holds when the word differs from val
	val  uint32
}

type clause []cmp

// rule lists the clauses under which one call is refused.
type rule struct {
	call    string
	clauses []clause
}

func eq(arg int, v uint32) cmp { return cmp{arg: arg, val: v} }
func ne(arg int, v uint32) cmp { return cmp{arg: arg, ne: true, val: v} }

// rules are the shield's refusals. Process and thread ids are ints: the
// kernel reads only the low 32 bits of their arguments.
func (s Shield) rules() []rule {
	var aimed, aimedEither, aimedKill []clause
	for _, id := range s.IDs {
		aimed = append(aimed, clause{eq(0, uint32(id))})
		aimedEither = append(aimedEither, clause{eq(0, uint32(id))}, clause{eq(1, uint32(id))})
		aimedKill = append(aimedKill, clause{eq(0, uint32(id))}, clause{eq(0, uint32(-id))})
	}
	rs := []rule{
		{"kill", aimedKill},
		{"tkill", aimed},
		{"tgkill", aimedEither},
		{"rt_sigqueueinfo", aimed},
		{"rt_tgsigqueueinfo", aimedEither},
		{"pidfd_open", aimed},
		// Another process (pid not 0) and a new limit (a pointer, 64 bits).
		{"prlimit64", []clause{{ne(0, 0), ne(2, 0)}, {ne(0, 0), {arg: 2, high: true, ne: true}}}},
	}
	if s.Host {
		other := []clause{{ne(0, 0)}}
		rs = append(rs,
			// which is PRIO_PROCESS (0) and who the caller (0), or refused:
			// PRIO_PGRP and PRIO_USER reach further.
			rule{"setpriority", []clause{{ne(0, 0)}, {ne(1, 0)}}},
			// which is IOPRIO_WHO_PROCESS (1) and who the caller (0).
			rule{"ioprio_set", []clause{{ne(0, 1)}, {ne(1, 0)}}},
			rule{"sched_setaffinity", other},
			rule{"sched_setscheduler", other},
			rule{"sched_setparam", other},
			rule{"sched_setattr", other},
		)
	}
	return rs
}

// program assembles the shield for goarch. Each rule is a block that loads
// the call number, skips the block when it is not its call, and otherwise
// refuses on the first clause that holds and allows after the last.
func (s Shield) program(goarch string) ([]unix.SockFilter, error) {
	arch, ok := shieldArch[goarch]
	if !ok {
		return nil, fmt.Errorf("seccomp: no shield for %s", goarch)
	}
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jeq := func(v uint32, jt, jf int) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: v, Jt: uint8(jt), Jf: uint8(jf)}
	}
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }

	prog := []unix.SockFilter{
		ld(offArch),
		jeq(arch.audit, 1, 0),
		ret(shieldKill),
	}
	if goarch == "amd64" {
		// x32 numbers carry this bit; the policy's filter kills them too.
		prog = append(prog,
			ld(offNr),
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: x32Bit, Jt: 0, Jf: 1},
			ret(shieldKill),
		)
	}
	for _, r := range s.rules() {
		if len(r.clauses) == 0 {
			continue
		}
		var body []unix.SockFilter
		for _, c := range r.clauses {
			// Each comparison is a load and a jump that, when it fails,
			// skips the rest of the clause and its refusal.
			for i, m := range c {
				off := uint32(offArgs + 8*m.arg)
				if m.high {
					off += 4
				}
				skip := 2*(len(c)-1-i) + 1
				if m.ne {
					body = append(body, ld(off), jeq(m.val, skip, 0))
				} else {
					body = append(body, ld(off), jeq(m.val, 0, skip))
				}
			}
			body = append(body, ret(shieldEPERM))
		}
		body = append(body, ret(shieldAllow))
		if len(body) > 255 {
			return nil, fmt.Errorf("seccomp: shield rule for %s too long", r.call)
		}
		prog = append(prog, ld(offNr), jeq(arch.calls[r.call], 0, len(body)))
		prog = append(prog, body...)
	}
	return append(prog, ret(shieldAllow)), nil
}
