package nsjail

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/reexec"
)

// spawnerName is the hidden subcommand of the spawner process.
const spawnerName = "__sandbox-spawner"

// spawnReq asks the spawner for a fresh init.
type spawnReq struct {
	ID      uint64
	NetNone bool
	// Bare starts an init without namespaces (the landlock rung), for a
	// caller whose inits run from a helper binary.
	Bare bool `json:",omitempty"`
}

// spawnResp answers a spawnReq; the init's socket travels with it.
type spawnResp struct {
	ID  uint64
	Pid int    `json:",omitempty"`
	Err string `json:",omitempty"`
	// Exited carries an init's exit status (ID 0): the spawner reaps it.
	Exited *uint32 `json:",omitempty"`
}

// spawnerMain serves clone requests until the caller closes the socket.
// Requests are served concurrently; the spawner's heap stays small, so each
// clone is cheap whatever the caller's size.
func spawnerMain([]string) int {
	// A terminal's ^C is for the caller, not for us.
	signal.Ignore(unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGTSTP)
	conn, err := fileConn(os.NewFile(initFd, "corral-spawner"))
	closeInherited() // nothing the caller leaked reaches the inits
	if err != nil {
		os.Stderr.WriteString("corral: " + spawnerName + " is started by corral itself, not by hand\n")
		return 1
	}
	if sayHello(conn) != nil {
		return 0 // the caller is gone
	}
	var wmu sync.Mutex
	// An init's status follows the answer that announced its pid: one that
	// exits before it is announced waits in early.
	announced, early := map[int]bool{}, map[int]uint32{}
	registerInits = false
	initExited = func(pid int, ws syscall.WaitStatus) {
		status := uint32(ws)
		wmu.Lock()
		defer wmu.Unlock()
		if !announced[pid] {
			early[pid] = status
			return
		}
		delete(announced, pid)
		send(conn, spawnResp{Pid: pid, Exited: &status})
	}
	for {
		var req spawnReq
		if _, err := recv(conn, &req); err != nil {
			return 0 // the caller is gone
		}
		go func() {
			resp := spawnResp{ID: req.ID}
			f, pid, err := spawnerStart(req)
			if err != nil {
				resp.Err = err.Error()
			}
			resp.Pid = pid
			wmu.Lock()
			defer wmu.Unlock()
			if f != nil {
				send(conn, resp, f)
				f.Close()
				if status, ok := early[pid]; ok {
					delete(early, pid)
					send(conn, spawnResp{Pid: pid, Exited: &status})
				} else {
					announced[pid] = true
				}
			} else {
				send(conn, resp)
			}
		}()
	}
}

// spawnerStart starts the init a request asks for.
func spawnerStart(req spawnReq) (*os.File, int, error) {
	if req.Bare {
		return startBareInit(nil)
	}
	return cloneInit(nil, req.NetNone)
}

// spawnerCloner clones inits through the process's shared spawner of the
// helper (nil: the caller's own binary). A spawner that died (killed, or
// out of memory) is replaced: the request that found it dead is retried
// once on a fresh one, so no Jail is left broken by it.
type spawnerCloner struct {
	helper *Helper
	bare   bool
}

func (s spawnerCloner) clone(netNone bool) (*conn, int, error) {
	req := spawnReq{NetNone: netNone, Bare: s.bare}
	c, pid, err := sharedSpawner(s.helper).clone(req)
	if errors.Is(err, errClosed) {
		c, pid, err = sharedSpawner(s.helper).clone(req)
	}
	return c, pid, err
}

// spawner is the caller's side of the spawner process.
type spawner struct {
	helper  *Helper // nil: the caller's own binary
	pid     int     // the spawner process, for tests
	mu      sync.Mutex
	conn    *conn
	nextID  uint64
	pending map[uint64]chan spawnResult
	err     error // set once the spawner is gone
}

type spawnResult struct {
	conn *conn
	pid  int
	err  error
}

var (
	sharedMu  sync.Mutex
	shared    = map[*Helper]*spawner{} // by binary; nil is the caller's own
	errClosed = errors.New("spawner exited")
)

// sharedSpawner returns the process's spawner running helper (nil: the
// caller's own binary), starting a new one when there is none or the last
// one died.
func sharedSpawner(helper *Helper) *spawner {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	s := shared[helper]
	if s == nil || s.failed() {
		s = &spawner{helper: helper, pending: map[uint64]chan spawnResult{}}
		s.err = s.startProcess()
		shared[helper] = s
	}
	return s
}

// checkHelper starts the helper's spawner, if it is not running, and
// returns why it cannot serve: a binary that is not corral's, or one built
// from another version.
func checkHelper(helper *Helper) error {
	s := sharedSpawner(helper)
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(s.err, errClosed) {
		return nil // it answered, then died: the next clone starts another
	}
	return s.err
}

func (s *spawner) failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil
}

// startProcess starts the spawner with a plain fork+exec (vfork: cheap from
// any heap) in its own session, so terminal signals do not reach it.
func (s *spawner) startProcess() error {
	ours, theirs, err := socketPair()
	if err != nil {
		return err
	}
	defer theirs.Close()
	path, argv0, what := reexec.Self, reexec.Self, selfName
	if s.helper != nil {
		path, argv0, what = s.helper.exe(), s.helper.path, s.helper.path
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        []string{argv0, spawnerName},
		Env:         []string{},
		Stderr:      os.Stderr,
		ExtraFiles:  []*os.File{theirs},
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: unix.SIGKILL, Setsid: true},
	}
	err = cmd.Start()
	theirs.Close() // the spawner's alone: its exit must read as EOF here
	if err != nil {
		ours.Close()
		if s.helper != nil {
			return helperError(what, err)
		}
		return fmt.Errorf("start spawner: %w", err)
	}
	s.pid = cmd.Process.Pid
	go cmd.Wait()
	if s.conn, err = fileConn(ours); err != nil {
		cmd.Process.Kill()
		return err
	}
	if err := awaitHello(s.conn, what); err != nil {
		s.conn.Close()
		cmd.Process.Kill()
		return err
	}
	go s.readLoop()
	return nil
}

func (s *spawner) readLoop() {
	for {
		var resp spawnResp
		files, err := recv(s.conn, &resp)
		if err != nil {
			s.fail(errClosed)
			lostInitExits()
			return
		}
		if resp.Exited != nil {
			recordInitExit(resp.Pid, syscall.WaitStatus(*resp.Exited))
			continue
		}
		res := spawnResult{pid: resp.Pid}
		switch {
		case resp.Err != "":
			res.err = errors.New(resp.Err)
			closeFiles(files)
		case len(files) != 1:
			res.err = errors.New("spawner sent no socket")
			closeFiles(files)
		default:
			initExitChan(resp.Pid) // before its status can arrive
			res.conn, res.err = fileConn(files[0])
		}
		s.mu.Lock()
		ch := s.pending[resp.ID]
		delete(s.pending, resp.ID)
		s.mu.Unlock()
		if ch != nil {
			ch <- res
		}
	}
}

// fail records that the spawner is gone and fails every waiting request.
func (s *spawner) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
	for id, ch := range s.pending {
		ch <- spawnResult{err: err}
		delete(s.pending, id)
	}
}

func (s *spawner) clone(req spawnReq) (*conn, int, error) {
	ch := make(chan spawnResult, 1)
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return nil, 0, s.err
	}
	s.nextID++
	req.ID = s.nextID
	s.pending[req.ID] = ch
	err := send(s.conn, req)
	s.mu.Unlock()
	if err != nil {
		s.fail(errClosed)
		return nil, 0, fmt.Errorf("%w: %v", errClosed, err)
	}
	r := <-ch
	return r.conn, r.pid, r.err
}

// Register adds the init and spawner entrypoints to the reexec registry.
func Register() {
	registerOnce.Do(func() {
		reexec.Register(initName, initMain)
		reexec.Register(spawnerName, spawnerMain)
		reexec.Register(probeName, probeMain)
		reexec.Register(probeNSName, probeNSMain)
	})
}

var registerOnce sync.Once
