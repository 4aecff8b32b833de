package nsjail

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/internal/pathtree"
	"github.com/corralhq/corral/internal/tally"
	"github.com/corralhq/corral/seccomp"
)

// Violation is one thing the kernel was asked to do that the sandbox's
// policy refuses, as the init's listener saw it, with how often.
type Violation struct {
	Kind    ViolationKind
	Path    string
	Reason  Reason
	Match   string `json:",omitempty"` // the configured path or name that refuses it
	Process string `json:",omitempty"`
	Count   int
	// Probe marks a refused call the C library makes on its own and does
	// without (see libcProbe): reported, but no violation to show.
	Probe bool `json:",omitempty"`
}

// ViolationKind is a Violation's kind, as package corral names it.
type ViolationKind string

const (
	KindWrite   ViolationKind = "write"
	KindPlant   ViolationKind = "plant"
	KindSyscall ViolationKind = "syscall" // Path is the call's name
)

// Reason is why the policy refuses a path.
type Reason string

const (
	ReasonOutside   Reason = "outside"   // under no writable path
	ReasonReadOnly  Reason = "read-only" // under a read-only path (Match)
	ReasonHidden    Reason = "hidden"    // under a hidden path (Match)
	ReasonProtected Reason = "protected" // a protected entry (Match, the name)
	ReasonFilter    Reason = "filter"    // the seccomp filter (Match, the errno's name)
	// ReasonOmitted stands for what did not fit in the report: Count is
	// how many calls of the kind went unlisted.
	ReasonOmitted Reason = "omitted"
)

// maxViolations bounds the distinct entries the init keeps: the command
// chooses the paths it tries, and must not choose the init's memory. Past
// it, calls are only counted, one entry per kind.
const maxViolations = 256

// maxReportedPath bounds the length of a path in the report.
const maxReportedPath = 512

type violationKey struct {
	kind   ViolationKind
	path   string
	reason Reason
	match  string
	probe  bool
}

// judge decides, from the sandbox's configured paths alone, whether the
// kernel will refuse a write to a path: the mount tree and Landlock are
// built from the same lists, and stay the enforcers.
type judge struct {
	in        pathsView
	bare      bool
	protected []string // full rung: the entries bound read-only at start
	open      []string // writable beyond the configured roots
}

type pathsView struct {
	writable, readOnly, hidden, protected []string
}

// verdict classifies a write to p, an absolute clean path as the command
// named it.
func (j *judge) verdict(p string) (ViolationKind, Reason, string) {
	if within(p, "/proc", "/dev") != "" {
		// Descriptors reopened by name (/dev/stdout, /proc/self/fd/N),
		// terminals and devices: what they lead to is not in the name.
		return "", "", ""
	}
	if h := within(p, j.in.hidden...); h != "" {
		return KindWrite, ReasonHidden, h
	}
	// The innermost configured path decides: a read-only path under a
	// writable one stays read-only, a writable one under a read-only one
	// is writable.
	root, ro := innermost(p, j.in.writable), innermost(p, j.in.readOnly)
	if len(ro) > len(root) {
		return KindWrite, ReasonReadOnly, ro
	}
	if root == "" {
		if within(p, j.open...) != "" {
			return "", "", ""
		}
		return KindWrite, ReasonOutside, ""
	}
	if e := within(p, j.protected...); e != "" {
		return KindPlant, ReasonProtected, protectedName(e)
	}
	if j.bare {
		for _, name := range j.in.protected {
			if pathtree.Within(p, path.Join(root, name)) {
				return KindPlant, ReasonProtected, name
			}
		}
	}
	return "", "", ""
}

// within returns the first of bases that p is inside of, or "".
func within(p string, bases ...string) string {
	for _, b := range bases {
		if pathtree.Within(p, b) {
			return b
		}
	}
	return ""
}

// innermost returns the longest of bases that p is inside of, or "".
func innermost(p string, bases []string) string {
	best := ""
	for _, b := range bases {
		if len(b) > len(best) && pathtree.Within(p, b) {
			best = b
		}
	}
	return best
}

// protectedName is the protected name an entry bound read-only carries:
// its last component (".vscode" of /ws/sub/.vscode).
func protectedName(entry string) string { return path.Base(entry) }

// listener answers the calls the watch's filter stops: a call the seccomp
// policy refuses fails with the policy's errno and is recorded; a write
// goes on at once, as the kernel decides, and is recorded when the paths'
// policy refuses it.
type listener struct {
	fd      int
	initTid int // the init's own thread, whose calls are no command's
	watch   *seccomp.Watch
	calls   map[uint32]seccomp.WriteCall
	judge   judge
	conn    *conn
	live    atomic.Bool // the caller has the command: refusals may be sent as they come
	// reporting says whether violations are recorded; create, when not
	// nil, performs the calls that create names (see creator).
	reporting bool
	create    *creator
	// connectOnly, when set, are the only addresses the command's TCP
	// connections may reach, made by the listener (see serveNet).
	connectOnly []netip.AddrPort
	// loopback: every connect stops here to be looked at (serveLoopback).
	loopback bool
	// reads and limit answer the calls stopped beyond the write calls
	// (see serveAlso); nil when none are.
	reads map[uint32]seccomp.ReadCall
	limit *execLimit

	mu  sync.Mutex
	log *tally.Log[violationKey, Violation]
}

func newListener(fd int, w *seccomp.Watch, j judge) *listener {
	return &listener{
		fd: fd, initTid: unix.Gettid(), watch: w, calls: seccomp.WriteCalls(), judge: j,
		log: tally.New[violationKey, Violation](maxViolations), reporting: true,
	}
}

// run serves the listener until its descriptor fails.
func (l *listener) run() {
	// One thread sleeps in the kernel for the next call and is the one
	// woken (see seccomp.LoadListener).
	runtime.LockOSThread()
	if l.create != nil && !l.create.enter() {
		l.create = nil
	}
	for {
		n, err := seccomp.Receive(l.fd)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // the thread died before we took the call
			}
			// Unanswered, the command's writes would wait for ever; with
			// the listener closed they fail with ENOSYS instead. Receive
			// fails only on a descriptor that is not a listener.
			unix.Close(l.fd)
			return
		}
		l.serve(n)
	}
}

// serve reads what call n names, lets it go on, then judges it. The names
// are read before the call goes on, while the thread waits, and are hints:
// another thread of the command may change the memory meanwhile.
func (l *listener) serve(n seccomp.Notification) {
	if errno, refused := l.watch.Refuses(n); refused {
		if n.Pid == l.initTid {
			seccomp.Fail(l.fd, n.ID, errno)
			return
		}
		// Recorded while the thread waits: once answered, it may exit,
		// and its sandbox report what was recorded by then.
		l.record(refusedCall(n, errno))
		seccomp.Fail(l.fd, n.ID, errno)
		return
	}
	if l.serveNet(n) || l.serveAlso(n) || l.serveBind(n) || l.create.servesUmask(n) {
		return
	}
	call, ok := l.calls[n.Nr]
	if !ok {
		// Nothing else stops here; were it to, it fails as it would
		// without a listener.
		seccomp.Fail(l.fd, n.ID, unix.ENOSYS)
		return
	}
	if n.Pid == l.initTid {
		seccomp.Continue(l.fd, n.ID)
		return
	}
	// Each refusal is recorded before the call is answered (see
	// judgePaths).
	if l.create.creates(n, call) {
		// A call performed here that succeeded was the command's to make:
		// only one that failed is judged.
		var failing func()
		if l.reporting {
			failing = func() { l.judgePaths(n, call) }
		}
		l.create.serve(n, call, failing)
		return
	}
	if l.reporting {
		l.judgePaths(n, call)
	}
	seccomp.Continue(l.fd, n.ID)
}

// judgePaths records the refusals of the names call n writes. It runs while
// the thread waits: once answered, the thread may exit, and the init report
// what was recorded by then, before the listener got to record the rest.
//
// A name the policy refuses is a refusal only when the policy is why the
// call fails: one that fails anyway on the host (mkdir of an existing
// directory, unlink of a missing file, a directory the user may not write
// in) is not recorded (see failsAnyway). A hidden path is always: what the
// command sees there is not what the host has.
func (l *listener) judgePaths(n seccomp.Notification, call seccomp.WriteCall) {
	paths := l.paths(n, call)
	var refused []Violation
	hidden := false
	for _, p := range paths {
		if kind, reason, match := l.judge.verdict(p); kind != "" {
			refused = append(refused, Violation{Kind: kind, Path: truncate(p), Reason: reason, Match: match})
			hidden = hidden || reason == ReasonHidden
		}
	}
	if len(refused) == 0 || !hidden && failsAnyway(n, call, paths) {
		return
	}
	process := comm(n.Pid)
	for _, v := range refused {
		v.Process = process
		l.record(v)
	}
}

// paths are the absolute names call n writes, as its thread gave them.
func (l *listener) paths(n seccomp.Notification, call seccomp.WriteCall) []string {
	if call.Name == "openat2" && !openHowWrites(n) {
		return nil
	}
	var out []string
	for _, a := range call.Paths {
		p, ok := readString(n.Pid, n.Args[a.Path], unix.PathMax)
		if !ok || p == "" {
			continue // an empty path names the descriptor (AT_EMPTY_PATH)
		}
		if !path.IsAbs(p) {
			dir := "cwd"
			if a.Dir >= 0 && int32(n.Args[a.Dir]) != unix.AT_FDCWD {
				dir = "fd/" + strconv.Itoa(int(int32(n.Args[a.Dir])))
			}
			base, err := readLink("/proc/" + strconv.Itoa(n.Pid) + "/" + dir)
			if err != nil || !path.IsAbs(base) {
				continue // a directory that has no name here ("pipe:", deleted)
			}
			p = path.Join(base, p)
		}
		out = append(out, path.Clean(p))
	}
	return out
}

// openHowWrites reads openat2's flags (the first field of struct
// open_how) and tells whether they ask to write. Unreadable flags count
// as a write: a hint like any other.
func openHowWrites(n seccomp.Notification) bool {
	var b [8]byte
	if !readMemory(n.Pid, n.Args[2], b[:]) {
		return true
	}
	return binary.NativeEndian.Uint64(b[:])&seccomp.WriteFlags != 0
}

// record adds v to the log, and sends it to the caller at once when it is
// new and the caller already has the command.
func (l *listener) record(v Violation) {
	if !l.reporting {
		return
	}
	l.mu.Lock()
	isNew, kept := l.log.Add(violationKey{v.Kind, v.Path, v.Reason, v.Match, v.Probe}, v, 1)
	if !kept {
		l.log.Overflow(violationKey{v.Kind, "", ReasonOmitted, "", false}, Violation{Kind: v.Kind, Reason: ReasonOmitted}, 1)
	}
	l.mu.Unlock()
	if isNew && kept && l.live.Load() {
		v.Count = 1
		sendNoWait(l.conn, reply{Violation: &v})
	}
}

// report returns the violations recorded so far, with their counts.
func (l *listener) report() []Violation {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Violation
	for _, it := range l.log.Items() {
		v := it.Value
		v.Count = it.Count
		out = append(out, v)
	}
	return out
}

// comm is the name of thread pid's process, as the kernel shows it.
func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

func truncate(p string) string {
	if len(p) <= maxReportedPath {
		return p
	}
	return p[:maxReportedPath] + "…"
}

// listen puts the seccomp policy on the calling thread as a watch (see
// seccomp.Watch): one filter that refuses what the policy refuses, through
// a listener that reports it, and stops the write calls in the same
// listener. It returns nil when it loaded nothing: the caller then loads
// the policy as it is, and the command runs unwatched with an empty
// report (reporting is no protection), as where the kernel cannot stop
// calls in a listener or the thread's chain has a listener already.
//
// Preconditions: must be called with the OS thread locked, by confine.
func listen(s *setup, planted *guard.Session, policy []byte, report bool) *listener {
	w, err := seccomp.NewWatch(policy)
	if err != nil {
		return nil
	}
	creates := createsNames(s, planted)
	w.Also = alsoOf(s, report)
	w.Also.Binds = creates && stopsBinds(s)
	w.Also.Umask = creates
	prog, err := watchProgram(w, report, planted.Lazy())
	if err == nil {
		prog, err = withConnects(s, prog)
	}
	if err == nil && watchesLoopback(s, report) {
		prog, err = withLoopbackWatch(prog)
	}
	if err != nil {
		s.connectErr = err
		return nil
	}
	// Before the filter: the thread's own calls stop there.
	var create *creator
	if creates {
		create = newCreator(s, planted)
	}
	fd, err := seccomp.LoadListener(prog)
	if err != nil {
		if create != nil {
			unix.Close(create.root)
		}
		s.connectErr = err
		return nil
	}
	j := judge{
		in:   pathsView{writable: s.Paths.Writable, readOnly: s.Paths.ReadOnly, hidden: s.Paths.Hidden, protected: s.Paths.Protected},
		bare: s.Bare,
		open: []string{"/tmp", "/dev/shm"},
	}
	if s.Bare {
		j.open = []string{s.TmpDir}
	} else {
		j.protected = planted.ReadOnly()
		// A layered home takes every write, into its upper directory;
		// it is no writable root (nothing protected is looked for there).
		for _, layer := range s.Paths.Layered {
			j.open = append(j.open, layer.Path)
		}
	}
	l := newListener(fd, w, j)
	l.reporting = report
	if create != nil {
		create.listener = fd
		l.create = create
	}
	l.connectOnly = s.ConnectOnly
	l.loopback = watchesLoopback(s, report)
	l.answer(s, w.Also)
	go l.run()
	return l
}

// goLive lets the listener send refusals as they come, once the caller
// has the command (and reads its messages).
func (l *listener) goLive(c *conn) {
	if l != nil {
		l.conn = c
		l.live.Store(true)
	}
}
