package nsjail

import (
	"encoding/binary"

	"github.com/corralhq/corral/seccomp"
)

// KindRead is a read (an open without write flags, or an exec) of a path
// the sandbox hides.
const KindRead ViolationKind = "read"

// watchesReads tells whether the report of the command started from s
// lists reads of hidden paths: only when something is hidden, as every
// open then stops in the listener.
func watchesReads(s *setup) bool { return len(s.Paths.Hidden) > 0 }

// serveRead answers a read call n stopped for the report (see
// seccomp.ReadCalls) and records it when it names a hidden path; false,
// leaving it to the write side, when it is an open that writes. The call
// goes on as the kernel decides: the mount tree or Landlock refuses it, and
// what the listener reads of it is a hint.
func (l *listener) serveRead(n seccomp.Notification) bool {
	call, ok := l.reads[n.Nr]
	if !ok || opensToWrite(n, call) {
		return false
	}
	if n.Pid == l.initTid {
		seccomp.Continue(l.fd, n.ID)
		return true
	}
	// paths resolves each name as the write side does; a WriteCall with no
	// Name, as its openat2 test is about writes.
	paths := l.paths(n, seccomp.WriteCall{Paths: []seccomp.PathArg{call.Path}})
	var vs []Violation
	for _, p := range paths {
		if h := within(p, l.judge.in.hidden...); h != "" {
			vs = append(vs, Violation{Kind: KindRead, Path: truncate(p), Reason: ReasonHidden, Match: h})
		}
	}
	if len(vs) > 0 {
		// Named and recorded while the thread waits: once answered, it
		// may exit.
		process := comm(n.Pid)
		for _, v := range vs {
			v.Process = process
			l.record(v)
		}
	}
	seccomp.Continue(l.fd, n.ID)
	return true
}

// opensToWrite tells whether n is an open whose flags ask to write, read
// from its register or, for openat2, its struct open_how (unreadable flags
// count as a write, which the write side then judges).
func opensToWrite(n seccomp.Notification, call seccomp.ReadCall) bool {
	switch {
	case call.FlagsArg >= 0:
		return n.Args[call.FlagsArg]&seccomp.WriteFlags != 0
	case call.HowArg >= 0:
		var b [8]byte
		if !readMemory(n.Pid, n.Args[call.HowArg], b[:]) {
			return true
		}
		return binary.NativeEndian.Uint64(b[:])&seccomp.WriteFlags != 0
	}
	return false
}
