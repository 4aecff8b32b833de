package nsjail

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/internal/lookpath"
	"github.com/corralhq/corral/limits"
	"github.com/corralhq/corral/mounts"
)

// The messages exchanged with an init, in order: setup → ready, exec →
// started, then exit. Any step may be answered with a failure instead.

// setup describes the sandbox to build.
type setup struct {
	Plan    *mounts.Plan
	NetNone bool
	// NetProxy: the init brings lo up and sends two listening sockets on
	// 127.0.0.1 with its Ready reply (Options.NetProxy).
	NetProxy bool `json:",omitempty"`
	// ConnectOnly: the command's TCP connections are the init's to make,
	// to these addresses only (Options.ConnectOnly).
	ConnectOnly []netip.AddrPort `json:",omitempty"`
	// HostPorts: the init listens on these ports of the namespace's
	// loopback and sends the sockets with Ready (Options.HostPorts);
	// Dialer: it sends a dialer too (Options.Publish).
	HostPorts []uint16 `json:",omitempty"`
	Dialer    bool     `json:",omitempty"`
	Workspace string
	// Paths is what Plan was built from; the Landlock rules derive from the
	// same lists.
	Paths mounts.Input
	// Landlock, when set, is enforced on the command.
	Landlock *Landlock `json:",omitempty"`
	// Seccomp is a compiled filter loaded on the command.
	Seccomp []byte `json:",omitempty"`
	// SeccompName, in place of Seccomp, names a filter generated ahead,
	// which the init embeds too; SeccompSum is its digest.
	SeccompName string `json:",omitempty"`
	SeccompSum  string `json:",omitempty"`
	// Bare starts the command without namespaces (the landlock rung), with
	// TmpDir, made by the caller for this command, in place of a private
	// /tmp.
	Bare   bool   `json:",omitempty"`
	TmpDir string `json:",omitempty"`
	// NoGuard leaves the binds unguarded against the host (see
	// watchMounts): set only by the module's own tests, through
	// internal/testhook, to show what the guard prevents.
	NoGuard bool `json:",omitempty"`
	// NoPtrace keeps CAP_SYS_PTRACE from the init's listener (see
	// ptraced): set only by the module's own tests, through
	// internal/testhook, to show what it is for.
	NoPtrace bool `json:",omitempty"`
	// Limits are the rlimits and tmpfs sizes of the command (the sizes are
	// in Plan already); PidsRlimit says RLIMIT_NPROC counts only the
	// sandbox's tasks, so that the pids limit is set as one.
	Limits     limits.Set `json:",omitempty"`
	PidsRlimit bool       `json:",omitempty"`
	// PidsExact: the listener sets the pids limit on the command alone
	// (Options.PidsExact).
	PidsExact bool `json:",omitempty"`
	// MemoryCgroup says a cgroup's memory.max counts the sandbox's memory,
	// shared memory included; without it a memory limit refuses what
	// makes shared memory (sharedMemoryFilter).
	MemoryCgroup bool `json:",omitempty"`

	guard *mounts.Guard // the init's own, once the tree is built
	// listeners are the init's own: the proxy sockets, sent with Ready
	// and then closed.
	listeners []*os.File
	// dialer is the init's end of the dialer (serveDialer).
	dialer *os.File
	// planting is the init's own: what it keeps, while the sandbox is
	// built, to guard protected names once the command starts (package
	// internal/guard).
	planting *guard.Session
	// listener is the init's own: it reports the command's refused writes.
	listener *listener
	// connectErr is why no listener keeps ConnectOnly, if none does.
	connectErr error
	// reportReads is the init's own: execReq.Reads.
	reportReads bool
}

// control is what the caller may send once the command runs.
type control struct {
	Kill bool `json:",omitempty"` // end every process of the sandbox
}

// execReq is the command to start; its stdin, stdout and stderr, then Extra
// further descriptors (Cmd.ExtraFiles, placed at 3 and up in the command),
// travel as file descriptors with the message.
type execReq struct {
	Path  string
	Args  []string
	Env   []string
	Dir   string
	Extra int `json:",omitempty"`
	// Report has the init watch the command's writes and report those the
	// policy refuses (see listener).
	Report bool `json:",omitempty"`
	// Reads has the report list reads of hidden paths too (see
	// watchesReads).
	Reads bool `json:",omitempty"`
	// TTY gives the command a pseudo-terminal of the sandbox's devpts as
	// its standard streams and controlling terminal; the Started reply
	// carries the other side.
	TTY bool `json:",omitempty"`
}

// reply is what the init says back. A Ready reply of a sandbox with
// NetProxy carries its two listening sockets.
type reply struct {
	Ready   bool   `json:",omitempty"`
	Started bool   `json:",omitempty"`
	Exited  bool   `json:",omitempty"`
	Status  uint32 `json:",omitempty"` // a wait status, with Exited
	// Rusage is the command's resource usage (its own and that of the
	// descendants it waited for), with Exited.
	Rusage *syscall.Rusage `json:",omitempty"`
	Fail   *failure        `json:",omitempty"`
	// Sources are the files the sandbox's writable and read-only binds
	// show, with Ready: the caller checks them when it takes the sandbox.
	Sources []source `json:",omitempty"`
	// Dropped, with Exited, lists what the command wrote under protected
	// names that was not merged back or was held (see internal/guard).
	Dropped []string `json:",omitempty"`
	// Hits, with Exited, are the limits the command ran into.
	Hits []limits.Name `json:",omitempty"`
	// Violation is one refusal, sent while the command runs the first time
	// it is seen (and only when the socket has room: Violations, with
	// Exited, is the complete list).
	Violation  *Violation  `json:",omitempty"`
	Violations []Violation `json:",omitempty"`
}

// failure is an error that crossed the socket.
type failure struct {
	Layer Layer
	Path  string `json:",omitempty"`
	Msg   string
	Errno uintptr `json:",omitempty"`
	// Code classifies the failure for the caller; Msg is for people only.
	Code failCode `json:",omitempty"`
}

// Error is a failure of a sandbox: the layer that failed and the path
// involved. A failure with a code wraps lookpath's matching error, for
// errors.Is.
type Error struct {
	Layer Layer
	Path  string
	Err   error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %v", e.Layer, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Layer, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func (f *failure) err() error {
	var err error = &remoteError{msg: f.Msg, errno: syscall.Errno(f.Errno)}
	switch f.Code {
	case codeNotFound:
		err = lookpath.ErrNotFound
	case codeNotExecutable:
		err = lookpath.ErrNotExecutable
	}
	return &Error{Layer: f.Layer, Path: f.Path, Err: err}
}

// remoteError is an error from the init: its text, and its errno for
// errors.Is when it had one.
type remoteError struct {
	msg   string
	errno syscall.Errno
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Unwrap() error {
	if e.errno == 0 {
		return nil
	}
	return e.errno
}

func failureOf(layer Layer, path string, err error) *failure {
	f := &failure{Layer: layer, Path: path, Msg: err.Error()}
	var me *mounts.Error
	if errors.As(err, &me) {
		f.Path = me.Path
		f.Msg = me.Kind.String() + ": " + me.Err.Error()
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		f.Errno = uintptr(errno) // lets errors.Is work on the other side
	}
	return f
}

// maxMessage bounds one message; plans are a few kilobytes.
const maxMessage = 256 << 10

// maxFiles is the most descriptors one message carries (the kernel's
// SCM_MAX_FD): a command's three stdio files and its extra files.
const maxFiles = 253

// buffers recycles receive buffers: allocating maxMessage per message would
// make the caller collect garbage about once per spawn.
var buffers = sync.Pool{New: func() any { b := make([]byte, maxMessage); return &b }}

// socketPair returns two connected SOCK_SEQPACKET sockets, close-on-exec.
func socketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	return os.NewFile(uintptr(fds[0]), "corral-sock"), os.NewFile(uintptr(fds[1]), "corral-sock"), nil
}

// conn is one end of a SOCK_SEQPACKET socket, used with plain blocking
// system calls: the thread that waits is the one the kernel wakes, with no
// hand-off through the runtime's poller, which costs milliseconds per round
// trip on a busy machine.
type conn struct {
	fd   int
	once sync.Once
}

// fileConn turns a socket file into a conn; f is closed.
func fileConn(f *os.File) (*conn, error) {
	defer f.Close()
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("dup", err)
	}
	return &conn{fd: fd}, nil
}

// Close shuts the socket down, which also wakes a reader blocked on it.
func (c *conn) Close() error {
	c.once.Do(func() {
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
		unix.Close(c.fd)
	})
	return nil
}

// send writes v as one message with files attached.
func send(c *conn, v any, files ...*os.File) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	for {
		_, err = unix.SendmsgN(c.fd, b, oob, nil, 0)
		if err != unix.EINTR {
			break
		}
	}
	runtime.KeepAlive(files)
	if err != nil {
		return os.NewSyscallError("sendmsg", err)
	}
	return nil
}

// sendNoWait sends v unless the socket is full: a caller not reading yet
// must never stop the one sending.
func sendNoWait(c *conn, v any) {
	b, err := marshal(v)
	if err != nil {
		return
	}
	for {
		_, err = unix.SendmsgN(c.fd, b, nil, nil, unix.MSG_DONTWAIT)
		if err != unix.EINTR {
			return
		}
	}
}

// recv reads one message into v and returns the files attached to it. A
// closed peer is io.EOF.
func recv(c *conn, v any) ([]*os.File, error) {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	buf := *bp
	oob := make([]byte, unix.CmsgSpace(maxFiles*4))
	var n, oobn, flags int
	var err error
	for {
		n, oobn, flags, _, err = unix.Recvmsg(c.fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, os.NewSyscallError("recvmsg", err)
	}
	files, ferr := parseRights(oob[:oobn])
	if n == 0 {
		closeFiles(files)
		return nil, io.EOF
	}
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		closeFiles(files)
		return nil, errors.New("message truncated")
	}
	if ferr != nil {
		return nil, ferr
	}
	if err := unmarshal(buf[:n], v); err != nil {
		closeFiles(files)
		return nil, err
	}
	return files, nil
}

func parseRights(oob []byte) ([]*os.File, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "received"))
		}
	}
	return files, nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
