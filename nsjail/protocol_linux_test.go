package nsjail

import (
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/lookpath"
	"github.com/corralhq/corral/mounts"
)

// connPair returns both ends of a real SOCK_SEQPACKET socket, as the caller
// and an init hold them.
func connPair(t *testing.T) (*conn, *conn) {
	t.Helper()
	ours, theirs, err := socketPair()
	require.NoError(t, err)
	a, err := fileConn(ours)
	require.NoError(t, err)
	b, err := fileConn(theirs)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// sendRaw writes b as one message, with fds attached, bypassing send's
// encoding: what a confused or hostile peer could write.
func sendRaw(t *testing.T, c *conn, b []byte, fds ...int) {
	t.Helper()
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, err := unix.SendmsgN(c.fd, b, oob, nil, 0)
	require.NoError(t, err)
}

// attachedPipe returns a pipe's read end and the write end to attach to a
// message; the test's own copy of the write end is closed once sent, so the
// read end sees EOF exactly when every received copy is closed as well.
func attachedPipe(t *testing.T) (r *os.File, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// receivedClosed reports whether no copy of the pipe's write end is left
// open: it reads from r, which returns EOF then, without blocking on it
// otherwise.
func receivedClosed(t *testing.T, r *os.File) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(r.Fd()), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	require.NoError(t, err)
	if n == 0 {
		return false // a write end is open and nothing was written
	}
	var b [1]byte
	got, err := r.Read(b[:])
	return got == 0 && errors.Is(err, io.EOF)
}

func TestProtocolRoundTripWithFiles(t *testing.T) {
	a, b := connPair(t)
	r, w := attachedPipe(t)
	require.NoError(t, send(a, execReq{Path: "/bin/true", Args: []string{"true"}, Extra: 1}, w))
	w.Close()
	var req execReq
	files, err := recv(b, &req)
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, "/bin/true", req.Path)
	assert.Equal(t, 1, req.Extra)
	flags, err := unix.FcntlInt(files[0].Fd(), unix.F_GETFD, 0)
	require.NoError(t, err)
	assert.NotZero(t, flags&unix.FD_CLOEXEC, "received descriptors are close-on-exec")
	assert.False(t, receivedClosed(t, r), "the received copy is open")
	closeFiles(files)
	assert.True(t, receivedClosed(t, r))
}

func TestProtocolCarriesMaxFiles(t *testing.T) {
	a, b := connPair(t)
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	files := make([]*os.File, maxFiles)
	for i := range files {
		files[i] = null
	}
	require.NoError(t, send(a, control{}, files...))
	got, err := recv(b, &control{})
	require.NoError(t, err)
	assert.Len(t, got, maxFiles)
	closeFiles(got)
}

// More descriptors than the kernel carries in one message is refused by
// the sender with an error, before anything reaches the peer.
func TestProtocolTooManyFilesIsAnError(t *testing.T) {
	a, b := connPair(t)
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	files := make([]*os.File, maxFiles+1)
	for i := range files {
		files[i] = null
	}
	err = send(a, control{}, files...)
	require.Error(t, err)
	assert.ErrorIs(t, err, unix.EINVAL)
	assert.Contains(t, err.Error(), "sendmsg")
	assert.False(t, pending(b), "nothing reached the peer")
}

// A command with more extra files than a message carries fails in exec,
// naming the limit, before anything is sent to the init.
func TestExecTooManyExtraFiles(t *testing.T) {
	s := startSleeper(t)
	p, peer := fakeProcess(t, s, false)
	defer p.release()
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	extra := make([]*os.File, maxFiles-2)
	for i := range extra {
		extra[i] = null
	}
	err = p.exec(&Command{Path: "true", Stdio: [3]*os.File{null, null, null}, ExtraFiles: extra})
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, LayerExec, e.Layer)
	assert.Equal(t, "exec: 251 extra files: at most 250", err.Error())
	assert.False(t, pending(peer), "nothing was sent")
	assert.Equal(t, stateBuilt, p.state)
}

// A message longer than the receive buffer is reported as truncated, and
// the descriptors that came with it are closed, not leaked.
func TestProtocolOversizeMessageIsTruncated(t *testing.T) {
	a, b := connPair(t)
	// The default send buffer may be smaller than one oversize message.
	require.NoError(t, unix.SetsockoptInt(a.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4*maxMessage))
	r, w := attachedPipe(t)
	big := []byte(`{"Path":"` + strings.Repeat("x", maxMessage) + `"}`)
	sendRaw(t, a, big, int(w.Fd()))
	w.Close()
	var req execReq
	files, err := recv(b, &req)
	require.EqualError(t, err, "message truncated")
	assert.Nil(t, files)
	assert.Empty(t, req.Path)
	assert.True(t, receivedClosed(t, r), "descriptors of a truncated message are closed")
	// The connection stays usable: the next message arrives whole.
	require.NoError(t, send(a, execReq{Path: "next"}))
	_, err = recv(b, &req)
	require.NoError(t, err)
	assert.Equal(t, "next", req.Path)
}

func TestProtocolLargestMessageFits(t *testing.T) {
	a, b := connPair(t)
	require.NoError(t, unix.SetsockoptInt(a.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4*maxMessage))
	// execReq's wire form: the marker, Path's length and bytes, then one
	// byte for each other field when empty. Path's length takes 3 bytes
	// at this size against 1 when empty.
	empty, err := marshal(execReq{})
	require.NoError(t, err)
	pad := maxMessage - len(empty) - 2
	want := strings.Repeat("y", pad)
	msg, err := marshal(execReq{Path: want})
	require.NoError(t, err)
	require.Len(t, msg, maxMessage)
	sendRaw(t, a, msg)
	var req execReq
	_, err = recv(b, &req)
	require.NoError(t, err)
	assert.Equal(t, want, req.Path)
}

// emptyExecReq is an empty execReq's wire form.
func emptyExecReq(t *testing.T) []byte {
	b, err := marshal(execReq{})
	require.NoError(t, err)
	return b
}

func TestProtocolGarbage(t *testing.T) {
	for _, tc := range []struct {
		name, msg, err string
	}{
		{"json", `{"Path":"a"}`, "earlier version"},
		{"no marker", "\x01\x00", "not a corral message"},
		{"truncated", "\xc5\x05/bi", "cut short"},
		{"bad boolean", "\xc5\x00\x00\x00\x00\x00\x07", "bad boolean"},
		{"trailing data", string(emptyExecReq(t)) + "\x00", "after the message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := connPair(t)
			r, w := attachedPipe(t)
			sendRaw(t, a, []byte(tc.msg), int(w.Fd()))
			w.Close()
			var req execReq
			files, err := recv(b, &req)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.Nil(t, files)
			assert.True(t, receivedClosed(t, r), "descriptors of a message that fails to decode are closed")
		})
	}
}

func TestProtocolEOF(t *testing.T) {
	t.Run("peer closed", func(t *testing.T) {
		a, b := connPair(t)
		require.NoError(t, send(a, control{Kill: true}))
		a.Close()
		var c control
		_, err := recv(b, &c)
		require.NoError(t, err, "a message sent before closing still arrives")
		assert.True(t, c.Kill)
		_, err = recv(b, &c)
		assert.ErrorIs(t, err, io.EOF)
		_, err = recv(b, &c)
		assert.ErrorIs(t, err, io.EOF, "EOF stays EOF")
		assert.Error(t, send(b, control{}), "sending to a closed peer fails")
	})
	t.Run("empty message", func(t *testing.T) {
		// SOCK_SEQPACKET cannot tell an empty message from the end: the
		// protocol never sends one, and takes one as the end.
		a, b := connPair(t)
		sendRaw(t, a, nil)
		_, err := recv(b, &control{})
		assert.ErrorIs(t, err, io.EOF)
	})
	t.Run("empty message with files", func(t *testing.T) {
		// Descriptors need a byte to travel with: x/sys sends a NUL, which
		// is no message, and the descriptors are closed.
		a, b := connPair(t)
		r, w := attachedPipe(t)
		sendRaw(t, a, nil, int(w.Fd()))
		w.Close()
		files, err := recv(b, &control{})
		assert.ErrorContains(t, err, "not a corral message")
		assert.Nil(t, files)
		assert.True(t, receivedClosed(t, r))
	})
	t.Run("own close wakes a reader", func(t *testing.T) {
		_, b := connPair(t)
		done := make(chan error)
		go func() {
			_, err := recv(b, &control{})
			done <- err
		}()
		// Whether Close comes before or during the recvmsg, the reader
		// returns: a shut-down socket reads as the end.
		b.Close()
		assert.Error(t, <-done)
		assert.NoError(t, b.Close(), "closing twice is harmless")
	})
}

// Every way an init can answer wrongly is an error of layer "init" naming
// what happened, never a hang or a panic.
func TestCallBadReplies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply func(t *testing.T, init *conn)
		err   string
	}{
		{"exits", func(t *testing.T, init *conn) { init.Close() }, "init: sandbox init exited during setup"},
		{"garbage", func(t *testing.T, init *conn) { sendRaw(t, init, []byte("\x00\x01")) }, "init: not a corral message"},
		{"unexpected", func(t *testing.T, init *conn) { require.NoError(t, send(init, reply{Started: true})) }, "init: unexpected reply"},
		{"empty", func(t *testing.T, init *conn) { require.NoError(t, send(init, reply{})) }, "init: unexpected reply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSleeper(t)
			p, init := fakeProcess(t, s, false)
			defer p.release()
			done := make(chan error)
			go func() { _, err := p.call(&setup{}, nil, func(r *reply) bool { return r.Ready }); done <- err }()
			var got setup
			_, err := recv(init, &got)
			require.NoError(t, err, "the setup arrives")
			tc.reply(t, init)
			err = <-done
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, LayerInit, e.Layer)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestCallToAClosedInit(t *testing.T) {
	s := startSleeper(t)
	p, init := fakeProcess(t, s, false)
	defer p.release()
	init.Close()
	_, err := p.call(&setup{}, nil, func(r *reply) bool { return r.Ready })
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, LayerInit, e.Layer)
}

// A failure crosses the socket with its layer, path and errno: errors.Is
// works on the caller's side.
func TestFailureCrossesTheSocket(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     *failure
		text  string
		errno syscall.Errno
	}{
		{"errno", failureOf("network", "lo", os.NewSyscallError("SIOCSIFFLAGS", unix.EPERM)),
			"network lo: SIOCSIFFLAGS: operation not permitted", unix.EPERM},
		{"mount error", failureOf("mount", "", &mounts.Error{Kind: mounts.Bind, Path: "/w", Err: unix.ENOENT}),
			"mount /w: bind: no such file or directory", unix.ENOENT},
		{"no path", failureOf("privileges", "", errors.New("capset refused")),
			"privileges: capset refused", 0},
		{"exec", execFailure("nope", &os.PathError{Op: "fork/exec", Path: "/x/nope", Err: unix.ENOENT}),
			"exec nope: " + lookpath.ErrNotFound.Error(), 0},
		{"not executable", execFailure("f", &os.PathError{Op: "fork/exec", Path: "/x/f", Err: unix.EACCES}),
			"exec f: " + lookpath.ErrNotExecutable.Error(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := connPair(t)
			require.NoError(t, send(a, reply{Fail: tc.f}))
			var r reply
			_, err := recv(b, &r)
			require.NoError(t, err)
			require.NotNil(t, r.Fail)
			err = r.Fail.err()
			assert.EqualError(t, err, tc.text)
			if tc.errno != 0 {
				assert.ErrorIs(t, err, tc.errno)
			} else {
				var errno syscall.Errno
				assert.False(t, errors.As(err, &errno), "no errno was sent")
			}
		})
	}
}
