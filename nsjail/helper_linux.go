package nsjail

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/reexec"
)

// Helper is a binary other than the caller's own that runs the spawner and
// the inits: any program that calls corral's Init first in main, such as
// the corral CLI, built from the same version of this package. A caller
// whose own package initialisation is heavy points its sandboxes at one so
// that no sandbox pays for that initialisation or holds its memory.
//
// The file is opened once, by [OpenHelper], and every start executes that
// open file (/proc/self/fd/N): renaming another file over the path later
// changes nothing.
type Helper struct {
	path string // as resolved, for messages and argv[0]
	fd   int    // O_PATH, close-on-exec, at or above helperMinFd
}

// helperMinFd keeps the pinned descriptor above the numbers a child's
// descriptors are moved through on their way to 0-3 (os/exec and
// syscall.ForkExec use the first free numbers above the files they pass):
// the child still holds it when it executes it.
const helperMinFd = 100

var (
	helpersMu sync.Mutex
	helpers   = map[string]*Helper{}
)

// OpenHelper checks and pins the helper binary at path: absolute, a
// regular file with execute permission. The path is resolved once; the
// same path returns the same Helper for the life of the process.
func OpenHelper(path string) (*Helper, error) {
	if !filepath.IsAbs(path) {
		return nil, helperError(path, errors.New("not an absolute path"))
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, helperError(path, err)
	}
	helpersMu.Lock()
	defer helpersMu.Unlock()
	if h := helpers[real]; h != nil {
		return h, nil
	}
	h, err := pinHelper(real)
	if err != nil {
		return nil, err
	}
	helpers[real] = h
	return h, nil
}

// pinHelper opens path without following a final link (resolved already)
// and checks what it opened, not the path.
func pinHelper(path string) (*Helper, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, helperError(path, os.NewSyscallError("open", err))
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, helperError(path, os.NewSyscallError("fstat", err))
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, helperError(path, errors.New("not a regular file"))
	}
	// The kernel decides at each exec; this says why early and clearly.
	if err := unix.Faccessat(unix.AT_FDCWD, fdPath(fd), unix.X_OK, unix.AT_EACCESS); err != nil || st.Mode&0o111 == 0 {
		return nil, helperError(path, errors.New("not executable"))
	}
	// A second name for the file could lie where a command writes: with
	// write access to it, its only name must be the one checked.
	if st.Nlink > 1 && unix.Faccessat(unix.AT_FDCWD, fdPath(fd), unix.W_OK, unix.AT_EACCESS) == nil {
		return nil, helperError(path, fmt.Errorf("has %d hard links and is writable by this process: one of them could be changed from a sandbox", st.Nlink))
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, helperMinFd)
	if err != nil {
		return nil, helperError(path, os.NewSyscallError("dup", err))
	}
	return &Helper{path: path, fd: high}, nil
}

// Path is the helper's resolved path.
func (h *Helper) Path() string { return h.path }

// exe is what a child executes: the pinned file.
func (h *Helper) exe() string { return fdPath(h.fd) }

// initExe is the binary an init started from this process runs: the
// helper's pinned file, or without a helper the caller's own binary.
func (h *Helper) initExe() string {
	if h == nil {
		return reexec.Self
	}
	return h.exe()
}

// name is how errors name the binary inits run: the helper's path, or
// the caller's own binary.
func (h *Helper) name() string {
	if h == nil {
		return selfName
	}
	return h.path
}

func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

func helperError(path string, err error) error {
	return &Error{Layer: LayerInit, Path: path, Err: fmt.Errorf("init helper: %w", err)}
}

// The spawner's first message says which protocol it speaks, so that a
// caller never talks to a binary built from another version of corral (it
// would ignore fields it does not know, such as a protection added since,
// or wait for messages that never come).

// hello is the spawner's first message.
type hello struct {
	Protocol string
}

// helloTimeout bounds the wait for a spawner's hello: a binary that is not
// corral's may neither answer nor exit.
var helloTimeout = 10 * time.Second

// protocolOverride replaces the protocol this process speaks, for tests
// of a mismatched helper.
var protocolOverride string

//go:generate go test -run TestProtocolDigestIsCurrent -update .

// protocolTypes are the messages the protocol digest covers.
func protocolTypes() []any {
	return []any{hello{}, spawnReq{}, spawnResp{}, setup{}, execReq{}, control{}, reply{}}
}

// protocol names the messages this binary exchanges with its spawner and
// inits: a digest of their types, field by field (typesDigest of
// protocolTypes), so that a field added on either side changes it
// without anyone remembering to. The digest is computed ahead, by go
// generate, into protocolDigest: every init says hello, and hashing the
// types by reflection would cost each one a few hundred microseconds of
// start-up. TestProtocolDigestIsCurrent fails while it is stale.
func protocol() string {
	if protocolOverride != "" {
		return protocolOverride
	}
	return "corral-init/2 " + protocolDigest
}

// typesDigest hashes the exported shape of the values' types.
func typesDigest(vs ...any) string {
	h := sha256.New()
	seen := map[reflect.Type]bool{}
	for _, v := range vs {
		writeType(h, reflect.TypeOf(v), seen)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func writeType(w interface{ Write([]byte) (int, error) }, t reflect.Type, seen map[reflect.Type]bool) {
	fmt.Fprintf(w, "%s(", t.Kind())
	defer w.Write([]byte(")"))
	if seen[t] {
		fmt.Fprintf(w, "%s", t.String())
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		writeType(w, t.Elem(), seen)
	case reflect.Map:
		writeType(w, t.Key(), seen)
		writeType(w, t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fmt.Fprintf(w, "%s %q ", f.Name, f.Tag.Get("json"))
			writeType(w, f.Type, seen)
		}
	}
}

// sayHello sends the spawner's hello.
func sayHello(c *conn) error { return send(c, hello{Protocol: protocol()}) }

// awaitHello reads the hello of a new spawner, or of an init started from
// a helper, and checks its protocol. what names the binary for the error.
func awaitHello(c *conn, what string) error {
	fds := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(helloTimeout)
	for {
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("poll", err)
		}
		if n == 0 {
			return helperError(what, fmt.Errorf("no answer in %v: not a corral binary (its main must call corral.Init first)", helloTimeout))
		}
		break
	}
	var h hello
	_, err := recv(c, &h)
	if errors.Is(err, errJSONMessage) {
		return helperError(what, errors.New("speaks the protocol of an earlier corral (JSON messages): use a corral binary built from the same version"))
	}
	if err != nil || h.Protocol == "" {
		return helperError(what, errors.New("not a corral binary: it exited without answering as corral's init (its main must call corral.Init first)"))
	}
	if h.Protocol != protocol() {
		return helperError(what, fmt.Errorf("speaks protocol %q, this program %q: use a corral binary built from the same version", h.Protocol, protocol()))
	}
	return nil
}

// selfName is how errors name the caller's own binary as the spawner.
const selfName = reexec.Self
