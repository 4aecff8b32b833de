package corral

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Cmd is a command prepared to run inside a Sandbox. It has the fields and
// methods of os/exec.Cmd that code ordinarily uses, so a caller switches from
// exec.CommandContext to Sandbox.Command without other changes.
//
// Process is the sandbox's own process on the host (its init): signals sent to
// it reach the command, and killing it ends every process in the sandbox.
type Cmd struct {
	Path string   // the command's name, resolved inside the sandbox
	Args []string // Args[0] is the name as given
	// Env is the command's environment. Nil means the sandbox's default
	// environment (see Config.Env), not the caller's.
	Env []string
	// Dir is the working directory inside the sandbox; empty means the
	// workspace.
	Dir string

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	Process      *os.Process
	ProcessState *ProcessState

	sb   *Sandbox
	ctx  context.Context
	proc process

	started, finished bool
	childFiles        []*os.File  // handed to the command, closed after start
	null              *os.File    // /dev/null, when a stream is nil
	closeAfterWait    []io.Closer // our ends of the pipes
	copies            sync.WaitGroup
	copyErr           error
	copyErrOnce       sync.Once
	ctxStop           func() bool
	ctxErr            chan error
}

// String returns a human-readable description of c.
func (c *Cmd) String() string { return strings.Join(c.Args, " ") }

// Environ returns the environment the command will get.
func (c *Cmd) Environ() []string {
	if c.Env != nil {
		return c.Env
	}
	return c.sb.env
}

// Start starts the command and returns without waiting for it.
func (c *Cmd) Start() error {
	if c.started {
		return errors.New("corral: already started")
	}
	c.started = true
	if c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			return err
		}
	}
	stdio, err := c.stdio()
	if err != nil {
		c.closeAll()
		return err
	}
	req := &startRequest{Name: c.Path, Args: c.Args, Env: c.Environ(), Dir: c.Dir, Stdio: stdio}
	proc, err := c.sb.backend.start(req)
	for _, f := range c.childFiles {
		f.Close()
	}
	if err != nil {
		c.closeAll()
		return err
	}
	c.proc = proc
	c.Process = proc.OSProcess()
	c.watchContext()
	return nil
}

// Wait waits for the command to exit and for its output to be copied.
func (c *Cmd) Wait() error {
	if !c.started {
		return errors.New("corral: not started")
	}
	if c.finished {
		return errors.New("corral: Wait was already called")
	}
	c.finished = true
	status, werr := c.proc.Wait()
	c.copies.Wait()
	for _, cl := range c.closeAfterWait {
		cl.Close()
	}
	if c.ctxStop != nil && !c.ctxStop() {
		// The context fired: its error explains the kill.
		if err := <-c.ctxErr; err != nil && werr == nil {
			werr = err
		}
	}
	if werr != nil {
		return werr
	}
	c.ProcessState = &ProcessState{pid: c.Process.Pid, status: status}
	if !c.ProcessState.Success() {
		return &ExitError{ProcessState: c.ProcessState}
	}
	return c.copyErr
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

// watchContext kills the sandbox when the command's context is done.
func (c *Cmd) watchContext() {
	if c.ctx == nil || c.ctx.Done() == nil {
		return
	}
	c.ctxErr = make(chan error, 1)
	c.ctxStop = context.AfterFunc(c.ctx, func() {
		c.proc.Kill()
		c.ctxErr <- c.ctx.Err()
	})
}

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
		c.closeAfterWait = append(c.closeAfterWait, pw)
		c.copy(func() error {
			_, err := io.Copy(pw, r)
			if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
				err = nil // the command stopped reading: not our failure
			}
			pw.Close()
			return err
		})
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
		c.closeAfterWait = append(c.closeAfterWait, pr)
		c.copy(func() error {
			_, err := io.Copy(w, pr)
			pr.Close()
			return err
		})
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

func (c *Cmd) copy(fn func() error) {
	c.copies.Add(1)
	go func() {
		defer c.copies.Done()
		if err := fn(); err != nil {
			c.copyErrOnce.Do(func() { c.copyErr = err })
		}
	}()
}

func (c *Cmd) closeAll() {
	for _, f := range c.childFiles {
		f.Close()
	}
	for _, cl := range c.closeAfterWait {
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
