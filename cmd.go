package corral

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Cmd is a command prepared to run inside a Sandbox. It has the fields and
// methods of os/exec.Cmd that code ordinarily uses, so a caller switches from
// exec.CommandContext to Sandbox.Command without other changes; the package
// documentation lists where it differs and why.
//
// Process is the sandbox's own process on the host (its init): signals sent to
// it reach the command, and killing it ends every process in the sandbox.
type Cmd struct {
	Path string   // the command's name, resolved inside the sandbox
	Args []string // Args[0] is the name as given
	// Env is the command's environment. Nil means the sandbox's default
	// environment (see Config.Env), not the caller's. Variables whose names
	// look secret are dropped from it too, unless Config.Env names them
	// (see Config.Env), so `append(os.Environ(), "X=1")` does not hand the
	// caller's secrets to the command. With NetworkAllow the proxy
	// variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, FTP_PROXY,
	// either case) name the sandbox's proxy, whatever Env says.
	Env []string
	// Dir is the working directory inside the sandbox; empty means the
	// workspace.
	Dir string

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// Terminal gives the command a terminal: a pseudo-terminal made in the
	// sandbox (in its own /dev/pts on the full rung) is its standard input,
	// output and error and its controlling terminal, in a session of its
	// own, as a login shell has one: job control works, and Ctrl-C and a
	// new window size reach its foreground job. Stdin, Stdout and Stderr
	// must be nil. After Start, TerminalFile is the terminal's other side:
	// what the command writes is read there, what is written there the
	// command reads. Without it, the command has no controlling terminal.
	Terminal bool

	// ExtraFiles are further open files for the command, at descriptors 3
	// and up (entry i becomes 3+i). They are the only descriptors beyond
	// 0, 1 and 2 the command gets: nothing else the caller holds open,
	// close-on-exec or not, reaches it. Unlike os/exec, an entry may not
	// be nil, and there may be at most 250.
	ExtraFiles []*os.File

	Process      *os.Process
	ProcessState *ProcessState

	// Cancel is called when the command's context is done before the
	// command exits, as in os/exec. Sandbox.Command sets it to kill the
	// whole sandbox; a caller may instead, for instance, send
	// Process.Signal(os.Interrupt). When Cancel returns nil, Wait reports
	// the context's error (unless Wait fails otherwise); when it returns
	// an error wrapping os.ErrProcessDone, the command had already ended
	// and Wait reports how it ended.
	Cancel func() error

	// WaitDelay bounds how long Wait waits, after the command exited or
	// after Cancel was called, for the command to exit and for the copying
	// of Stdout and Stderr to finish, as in os/exec. When it expires, the
	// sandbox is killed, the pipes are closed and Wait returns (with
	// ErrWaitDelay if nothing else went wrong). Zero means no bound. The
	// copying of a non-file Stdin never holds Wait once the sandbox has
	// ended: nothing is left that could read it.
	WaitDelay time.Duration

	// ReportWrites has the sandbox watch this command's writes and list
	// those it refused in Report, as [Config.Report] does for every
	// command. Set it before Start.
	ReportWrites bool

	sb   *Sandbox
	ctx  context.Context
	proc process

	startCalled bool
	waitCalled  bool
	childFiles  []*os.File  // handed to the command, closed after start
	null        *os.File    // /dev/null, when a stream is nil
	parentPipes []io.Closer // our ends of the pipes, closed by Wait
	copiers     []copier
	outDone     chan error // the output copiers finished, with the first error
	inDone      chan error // the Stdin copier finished, with its error
	ctxResult   chan ctxResult
	exited      atomic.Bool // the backend's Wait returned: the sandbox is released
	report      violations  // what the sandbox refused the command
}

// ErrWaitDelay is returned by Wait when the command exited but its output
// was still being copied when WaitDelay ran out.
var ErrWaitDelay = errors.New("corral: WaitDelay expired before I/O complete")

// copier copies one stream between the caller and the command.
type copier struct {
	input bool // copies Stdin: Wait does not wait for it (see awaitCopiers)
	fn    func() error
}

// ctxResult is what the context watcher tells Wait.
type ctxResult struct {
	err   error
	timer *time.Timer // WaitDelay's timer, started when the context was done
}

// String returns a human-readable description of c.
func (c *Cmd) String() string { return strings.Join(c.Args, " ") }

// TerminalFile returns, after Start with Terminal set, the other side of the
// command's terminal; nil otherwise. The caller reads the command's output
// from it until it fails (once every process of the sandbox holding the
// terminal is gone), writes the command's input to it, sets the window
// size on it (pty.Setsize, TIOCSWINSZ), and closes it.
func (c *Cmd) TerminalFile() *os.File {
	if c.proc == nil {
		return nil
	}
	return c.proc.Terminal()
}

// Environ returns the environment the command will get: Env, or the
// sandbox's default environment when Env is nil, without the variables the
// sandbox keeps from commands. With NetworkAllow the proxy variables are
// set when the command starts, once its proxy's ports are known.
func (c *Cmd) Environ() []string {
	if c.sb == nil {
		return nil
	}
	if c.Env != nil {
		return c.sb.spec.Secrets.env(c.sb.filterEnv(c.Env))
	}
	return c.sb.spec.Secrets.env(append([]string(nil), c.sb.env...))
}

// Start starts the command and returns without waiting for it.
func (c *Cmd) Start() (err error) {
	if c.startCalled {
		return errors.New("corral: already started")
	}
	c.startCalled = true
	defer func() {
		if err != nil {
			c.closeAll()
		}
	}()
	if c.sb == nil {
		return errors.New("corral: Cmd not made by Sandbox.Command")
	}
	if c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			return err
		}
	}
	if err := checkExtraFiles(c.ExtraFiles); err != nil {
		return err
	}
	if c.Terminal && (c.Stdin != nil || c.Stdout != nil || c.Stderr != nil) {
		return errors.New("corral: Cmd.Terminal: Stdin, Stdout and Stderr must be nil (the terminal is all three)")
	}
	stdio, err := c.stdio()
	if err != nil {
		return err
	}
	req := &startRequest{
		Name: c.Path, Args: c.Args, Env: c.Environ(), Dir: c.Dir, Stdio: stdio, ExtraFiles: c.ExtraFiles,
		Refused:   c.recordViolation,
		violation: c.noteViolation, report: c.ReportWrites || c.sb.spec.Report,
		reads: c.sb.spec.ReportReads, terminal: c.Terminal,
	}
	proc, err := c.sb.backend.start(req)
	for _, f := range c.childFiles {
		f.Close()
	}
	c.childFiles = nil
	if err != nil {
		return err
	}
	c.proc = proc
	c.Process = proc.OSProcess()
	c.startCopiers()
	if (c.Cancel != nil || c.WaitDelay != 0) && c.ctx != nil && c.ctx.Done() != nil {
		c.ctxResult = make(chan ctxResult)
		go c.watchContext(c.ctxResult)
	}
	return nil
}

// maxExtraFiles is how many ExtraFiles travel with a command, besides its
// three stdio files, in one message to the sandbox's init.
const maxExtraFiles = 250

// checkExtraFiles refuses what cannot reach the command as given: a nil
// entry (os/exec leaves that number closed; here it would shift the ones
// after it) and more files than one message carries.
func checkExtraFiles(files []*os.File) error {
	if len(files) > maxExtraFiles {
		return fmt.Errorf("corral: %d ExtraFiles: at most %d", len(files), maxExtraFiles)
	}
	for i, f := range files {
		if f == nil {
			return fmt.Errorf("corral: ExtraFiles[%d] is nil: every entry must be an open file", i)
		}
	}
	return nil
}

// Wait waits for the command to exit and for its output to be copied, then
// releases what the command held. It sets ProcessState whenever the command
// ran to its end, whatever error it returns.
//
// When the command's context was done and Cancel ended it, Wait returns the
// context's error (os/exec returns the ExitError of the killed process
// instead: here the sandbox, not the command, was killed, and the reason is
// the more useful answer); ProcessState says how the command ended.
func (c *Cmd) Wait() error {
	if c.proc == nil {
		return errors.New("corral: not started")
	}
	if c.waitCalled {
		return errors.New("corral: Wait was already called")
	}
	c.waitCalled = true
	ex, err := c.proc.Wait()
	// The sandbox is released: so is the handle in Process (its Pid stays),
	// after exited is set so that a Cancel calling Process.Kill from here
	// on counts as finding the command done.
	c.exited.Store(true)
	c.collectViolations()
	releaseKeepPid(c.Process)
	if err == nil {
		c.ProcessState = &ProcessState{pid: c.Process.Pid, status: ex.status, rusage: ex.rusage}
		if !c.ProcessState.Success() {
			err = &ExitError{ProcessState: c.ProcessState}
		}
	}
	var timer *time.Timer
	if c.ctxResult != nil {
		w := <-c.ctxResult
		timer = w.timer
		var ee *ExitError
		if w.err != nil && (err == nil || errors.As(err, &ee)) {
			err = w.err
		}
	}
	if ioErr := c.awaitCopiers(timer); err == nil {
		err = ioErr
	}
	closeAll(c.parentPipes)
	c.parentPipes = nil
	return err
}

// watchContext calls Cancel when the context is done before Wait has seen
// the command exit, then enforces WaitDelay. It hands its result to Wait.
func (c *Cmd) watchContext(result chan<- ctxResult) {
	select {
	case result <- ctxResult{}:
		return // the command exited first
	case <-c.ctx.Done():
	}
	var err error
	if c.Cancel != nil {
		switch cerr := c.Cancel(); {
		case cerr == nil:
			err = c.ctx.Err() // from here on, how the command ends may be our doing
		case errors.Is(cerr, os.ErrProcessDone), c.exited.Load():
			// It had ended already: nothing to report.
		default:
			err = fmt.Errorf("corral: canceling command: %w", cerr)
		}
	}
	if c.WaitDelay == 0 {
		result <- ctxResult{err: err}
		return
	}
	timer := time.NewTimer(c.WaitDelay)
	select {
	case result <- ctxResult{err: err, timer: timer}:
		return // Wait takes the timer over for the copiers
	case <-timer.C:
	}
	killed := false
	if kerr := c.proc.Kill(); kerr == nil {
		killed = true
	} else if !errors.Is(kerr, os.ErrProcessDone) {
		err = fmt.Errorf("corral: killing command: %w", kerr)
	}
	if c.outDone != nil {
		select {
		case outErr := <-c.outDone:
			if err == nil && !killed {
				err = outErr
			}
		default:
			closeAll(c.parentPipes)
			<-c.outDone
			if err == nil {
				err = ErrWaitDelay
			}
		}
		c.outDone = nil
	}
	result <- ctxResult{err: err}
}

// awaitCopiers waits for the goroutines copying the command's output;
// once WaitDelay has run out (timer, or WaitDelay from now) it closes the
// pipes and returns ErrWaitDelay. It does not wait for the goroutine
// copying a non-file Stdin: the sandbox has ended, so nothing can read that
// pipe any more, and a Stdin blocked in Read would hold Wait for ever. Its
// error counts if it has finished.
func (c *Cmd) awaitCopiers(timer *time.Timer) error {
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		c.outDone, c.inDone = nil, nil
	}()
	var err error
	if c.outDone != nil {
		if c.WaitDelay == 0 {
			err = <-c.outDone
		} else {
			if timer == nil {
				timer = time.NewTimer(c.WaitDelay)
			}
			select {
			case err = <-c.outDone:
			case <-timer.C:
				closeAll(c.parentPipes)
				<-c.outDone
				err = ErrWaitDelay
			}
		}
	}
	if c.inDone != nil {
		select {
		case inErr := <-c.inDone:
			if err == nil {
				err = inErr
			}
		default:
			// Still blocked reading Stdin: closing our end makes its next
			// write fail, and it ends.
		}
	}
	return err
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the command and returns its standard output. When the command
// fails and Stderr was nil, the ExitError carries the start of its stderr.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("corral: Stdout already set")
	}
	var stdout bytes.Buffer
	c.Stdout = &stdout
	var stderr *prefixBuffer
	if c.Stderr == nil {
		stderr = &prefixBuffer{max: 32 << 10}
		c.Stderr = stderr
	}
	err := c.Run()
	var ee *ExitError
	if stderr != nil && errors.As(err, &ee) {
		ee.Stderr = stderr.buf.Bytes()
	}
	return stdout.Bytes(), err
}

// CombinedOutput runs the command and returns its standard output and
// standard error interleaved.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("corral: Stdout or Stderr already set")
	}
	var b syncBuffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// StdinPipe returns a pipe connected to the command's standard input,
// closed by Wait once the command has exited. Close it to send EOF.
func (c *Cmd) StdinPipe() (io.WriteCloser, error) {
	if c.Stdin != nil {
		return nil, errors.New("corral: Stdin already set")
	}
	if c.startCalled {
		return nil, errors.New("corral: StdinPipe after process started")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.Stdin = pr
	c.childFiles = append(c.childFiles, pr)
	wc := &closeOnce{File: pw}
	c.parentPipes = append(c.parentPipes, wc)
	return wc, nil
}

// StdoutPipe returns a pipe connected to the command's standard output.
// Wait closes it once the command has exited: read everything before
// calling Wait.
func (c *Cmd) StdoutPipe() (io.ReadCloser, error) {
	if c.Stdout != nil {
		return nil, errors.New("corral: Stdout already set")
	}
	if c.startCalled {
		return nil, errors.New("corral: StdoutPipe after process started")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.Stdout = pw
	c.childFiles = append(c.childFiles, pw)
	c.parentPipes = append(c.parentPipes, pr)
	return pr, nil
}

// StderrPipe returns a pipe connected to the command's standard error, as
// StdoutPipe does for standard output.
func (c *Cmd) StderrPipe() (io.ReadCloser, error) {
	if c.Stderr != nil {
		return nil, errors.New("corral: Stderr already set")
	}
	if c.startCalled {
		return nil, errors.New("corral: StderrPipe after process started")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.Stderr = pw
	c.childFiles = append(c.childFiles, pw)
	c.parentPipes = append(c.parentPipes, pr)
	return pr, nil
}

// closeOnce is a pipe end that may be closed by both its user and Wait.
type closeOnce struct {
	*os.File
	once sync.Once
	err  error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { c.err = c.File.Close() })
	return c.err
}

// releaseKeepPid releases proc's handle (a pidfd) at once rather than when
// the garbage collector finds it, leaving its Pid readable as os/exec leaves
// Cmd.Process.Pid after Wait.
func releaseKeepPid(proc *os.Process) {
	if proc == nil {
		return
	}
	pid := proc.Pid
	proc.Release()
	proc.Pid = pid
}

// kill ends the sandbox; it is the default Cancel.
func (c *Cmd) kill() error { return c.proc.Kill() }

// stdio turns Stdin/Stdout/Stderr into the three files the command gets,
// creating pipes and copy goroutines for anything that is not an *os.File,
// as os/exec does.
func (c *Cmd) stdio() ([3]*os.File, error) {
	var files [3]*os.File
	var err error
	if files[0], err = c.input(c.Stdin); err != nil {
		return files, err
	}
	if files[1], err = c.output(c.Stdout); err != nil {
		return files, err
	}
	if c.Stderr != nil && interfaceEqual(c.Stderr, c.Stdout) {
		files[2] = files[1]
	} else if files[2], err = c.output(c.Stderr); err != nil {
		return files, err
	}
	return files, nil
}

func (c *Cmd) input(r io.Reader) (*os.File, error) {
	switch r := r.(type) {
	case nil:
		return c.devNull()
	case *os.File:
		return r, nil
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		c.childFiles = append(c.childFiles, pr)
		c.parentPipes = append(c.parentPipes, pw)
		c.copiers = append(c.copiers, copier{input: true, fn: func() error {
			_, err := io.Copy(pw, r)
			if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
				err = nil // the command stopped reading: not our failure
			}
			if cerr := pw.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
				err = cerr
			}
			return err
		}})
		return pr, nil
	}
}

func (c *Cmd) output(w io.Writer) (*os.File, error) {
	switch w := w.(type) {
	case nil:
		return c.devNull()
	case *os.File:
		return w, nil
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		c.childFiles = append(c.childFiles, pw)
		c.parentPipes = append(c.parentPipes, pr)
		c.copiers = append(c.copiers, copier{fn: func() error {
			_, err := io.Copy(w, pr)
			pr.Close() // in case the copy stopped on a write error
			return err
		}})
		return pw, nil
	}
}

// devNull is /dev/null for every stream left nil, opened once.
func (c *Cmd) devNull() (*os.File, error) {
	if c.null == nil {
		f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		c.null = f
		c.childFiles = append(c.childFiles, f)
	}
	return c.null, nil
}

// startCopiers starts the copying goroutines: outDone receives the first
// error once the output ones are done, inDone the Stdin one's.
func (c *Cmd) startCopiers() {
	var outs []func() error
	for _, cp := range c.copiers {
		if cp.input {
			in := make(chan error, 1)
			c.inDone = in
			go func() { in <- cp.fn() }()
		} else {
			outs = append(outs, cp.fn)
		}
	}
	c.copiers = nil
	if len(outs) == 0 {
		return
	}
	out := make(chan error, 1)
	c.outDone = out
	errs := make(chan error, len(outs))
	for _, fn := range outs {
		go func() { errs <- fn() }()
	}
	go func() {
		var first error
		for range outs {
			if err := <-errs; first == nil {
				first = err
			}
		}
		out <- first
	}()
}

// closeAll closes what a failed Start opened.
func (c *Cmd) closeAll() {
	for _, f := range c.childFiles {
		f.Close()
	}
	c.childFiles = nil
	closeAll(c.parentPipes)
	c.parentPipes = nil
}

func closeAll(cs []io.Closer) {
	for _, cl := range cs {
		cl.Close()
	}
}

// interfaceEqual compares two writers without panicking on uncomparable
// dynamic types.
func interfaceEqual(a, b any) (eq bool) {
	defer func() { _ = recover() }()
	return a == b
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

// prefixBuffer keeps the first max bytes written and discards the rest.
type prefixBuffer struct {
	max int
	buf bytes.Buffer
}

func (b *prefixBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
