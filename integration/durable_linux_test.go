package integration

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/internal/testhook"
)

// The kernel detaches a mount from every namespace when a process in
// another one removes or renames over the path it sits on. These tests do
// that on the host, as `git config`, an editor's atomic save or a rotated
// secret would, to each kind of protected path: while a command runs, and
// before a sandbox built ahead is taken. Each runs once more with the guard
// switched off (internal/testhook), where the same probe must find the
// protection lifted.

// durableScene is a workspace and, beside it, a read-only directory that
// holds hidden paths: its own mount stays when the host replaces a name in
// it, as a parent outside every writable root would.
type durableScene struct {
	ws, ro string
}

// The scene lies outside /tmp: the sandbox has a /tmp of its own, where
// the mount point of a bind is its own, out of the host's reach.
func newDurableScene(t *testing.T) *durableScene {
	return newDurableSceneIn(t, "/var/tmp")
}

func newDurableSceneIn(t *testing.T, dir string) *durableScene {
	base, err := os.MkdirTemp(dir, "corral-durable-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	s := &durableScene{ws: filepath.Join(base, "ws"), ro: filepath.Join(base, "ro")}
	require.NoError(t, os.Mkdir(s.ws, 0o755))
	require.NoError(t, os.Mkdir(s.ro, 0o755))
	require.NoError(t, unix.Mkfifo(filepath.Join(s.ro, "go"), 0o644))
	return s
}

func (s *durableScene) config() corral.Config {
	return corral.Config{Workspace: s.ws, ReadOnlyPaths: []string{s.ro}}
}

// durableKinds are the kinds of protected path. probe exits 0 when the
// sandbox is wrong about the path: the protection is lifted. For the
// workspace, wrong is judged on the host: the command's write did not land
// in the host's workspace.
type durableKind struct {
	name string
	// setup makes the path on the host and configures it.
	setup func(t *testing.T, s *durableScene, cfg *corral.Config) string
	dir   bool
	probe string
	// hostWrong, when set, judges the run from the host instead of probe's
	// status.
	hostWrong func(p string) bool
	// takeOnly: replacing the path while a command runs is not tried. A
	// running command's Landlock rules name the workspace's directory as
	// it was: a new one the host puts in its place stays unwritable to it
	// whatever the mounts do, and the next command gets it.
	takeOnly bool
	// atStart: the protection is mounted when each command starts, so a
	// sandbox built ahead does not hold it yet; its control run before a
	// take needs the protection absent instead of the guard.
	atStart bool
	// byCall: the protection is no mount but the guard's check of each
	// call that writes there, which the host replacing the path cannot
	// lift (TestProtectedNameWhileHostReplaces).
	byCall bool
}

var durableKinds = []durableKind{
	{
		name: "hidden file",
		setup: func(t *testing.T, s *durableScene, cfg *corral.Config) string {
			p := filepath.Join(s.ro, "token")
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
			cfg.HiddenPaths = append(cfg.HiddenPaths, p)
			return p
		},
		probe: `grep -q rotated "$P"`,
	},
	{
		name: "hidden directory",
		setup: func(t *testing.T, s *durableScene, cfg *corral.Config) string {
			p := filepath.Join(s.ro, "keys")
			require.NoError(t, os.Mkdir(p, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(p, "id"), []byte("old"), 0o600))
			cfg.HiddenPaths = append(cfg.HiddenPaths, p)
			return p
		},
		dir:   true,
		probe: `grep -q rotated "$P/id"`,
	},
	{
		name: "read-only file",
		setup: func(t *testing.T, s *durableScene, cfg *corral.Config) string {
			p := filepath.Join(s.ws, "notes.txt")
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
			cfg.ReadOnlyPaths = append(cfg.ReadOnlyPaths, p)
			return p
		},
		probe: `echo planted >> "$P"`,
	},
	{
		name: "read-only directory",
		setup: func(t *testing.T, s *durableScene, cfg *corral.Config) string {
			p := filepath.Join(s.ws, "data")
			require.NoError(t, os.Mkdir(p, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, "id"), []byte("old"), 0o644))
			cfg.ReadOnlyPaths = append(cfg.ReadOnlyPaths, p)
			return p
		},
		dir:   true,
		probe: `echo planted > "$P/planted"`,
	},
	{
		name: "protected name",
		setup: func(t *testing.T, s *durableScene, cfg *corral.Config) string {
			p := filepath.Join(s.ws, ".bashrc")
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
			return p
		},
		probe:   `echo planted >> "$P"`,
		atStart: true,
		byCall:  true,
	},
	{
		name: "workspace",
		setup: func(t *testing.T, s *durableScene, cfg *corral.Config) string {
			return s.ws
		},
		dir:       true,
		probe:     `echo written > "$P/written"`,
		hostWrong: func(p string) bool { return !fileHas(filepath.Join(p, "written"), "written") },
		takeOnly:  true,
	},
}

// durableReplacements are what the host does to the path.
type durableReplacement struct {
	name    string
	replace func(t *testing.T, p string, dir bool)
}

var durableReplacements = []durableReplacement{
	{
		// A file: a new one renamed over it. A directory cannot be renamed
		// over unless empty: moved aside, and a new one moved in.
		name: "rename over",
		replace: func(t *testing.T, p string, dir bool) {
			next := p + ".new"
			if dir {
				require.NoError(t, os.Mkdir(next, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(next, "id"), []byte("rotated"), 0o644))
				require.NoError(t, os.Rename(p, p+".old"))
			} else {
				require.NoError(t, os.WriteFile(next, []byte("rotated"), 0o644))
			}
			require.NoError(t, os.Rename(next, p))
		},
	},
	{
		name: "delete and recreate",
		replace: func(t *testing.T, p string, dir bool) {
			require.NoError(t, os.RemoveAll(p))
			if dir {
				require.NoError(t, os.Mkdir(p, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(p, "id"), []byte("rotated"), 0o644))
			} else {
				require.NoError(t, os.WriteFile(p, []byte("rotated"), 0o644))
			}
		},
	},
}

func TestProtectionsSurviveHostReplacingWhileRunning(t *testing.T) {
	eachDurableCase(t, false, func(t *testing.T, s *durableScene, cfg corral.Config, k durableKind, r durableReplacement, p string, guarded bool) bool {
		return replaceWhileRunning(t, s, cfg, p, k.probe, guarded, func() { r.replace(t, p, k.dir) })
	})
}

// eachDurableCase runs check for every kind of guarded path (but those
// only checked when a sandbox is taken, unless withTakeOnly) and every
// way of replacing it, with the guard and, as the control, without it.
// check reports whether the probe found the sandbox wrong; the host's own
// view decides instead where the kind says so.
func eachDurableCase(t *testing.T, withTakeOnly bool, check func(t *testing.T, s *durableScene, cfg corral.Config, k durableKind, r durableReplacement, p string, guarded bool) bool) {
	for _, k := range durableKinds {
		if (k.takeOnly || k.byCall) && !withTakeOnly {
			continue
		}
		for _, r := range durableReplacements {
			for _, guarded := range []bool{true, false} {
				name := k.name + "/" + r.name
				if !guarded {
					name += "/control without the guard"
				}
				t.Run(name, func(t *testing.T) {
					s := newDurableScene(t)
					cfg := s.config()
					p := k.setup(t, s, &cfg)
					wrong := check(t, s, cfg, k, r, p, guarded)
					if k.hostWrong != nil {
						wrong = k.hostWrong(p)
					}
					if guarded {
						assert.False(t, wrong, "the probe found %s lifted", p)
					} else {
						assert.True(t, wrong, "without the guard the probe should find %s lifted", p)
					}
				})
			}
		}
	}
}

// replaceWhileRunning starts a command that waits on a fifo, replaces the
// path on the host once it waits, lets the guard (if any) put its mount
// back, then lets the command probe. It returns whether the probe found
// the sandbox wrong.
func replaceWhileRunning(t *testing.T, s *durableScene, cfg corral.Config, p, probe string, guarded bool, replace func()) bool {
	sb := durableSandbox(t, cfg, guarded)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	fifo := filepath.Join(s.ro, "go")
	c := sb.Command(ctx, "sh", "-c", `read x < "$FIFO"; `+probe)
	c.Env = []string{"PATH=/usr/bin:/bin", "P=" + p, "FIFO=" + fifo}
	c.Dir = "/"
	var out syncBuffer
	c.Stdout, c.Stderr = &out, &out
	require.NoError(t, c.Start())
	// Opening the fifo for writing returns once the command opened it.
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	mountinfo := "/proc/" + itoa(c.Process.Pid) + "/mountinfo"
	before := mountsAt(t, mountinfo, p)
	require.NotZero(t, before, "%s is a mount point in the sandbox", p)
	replace()
	if guarded {
		waitMountsAt(ctx, t, mountinfo, p, before)
	}
	_, err = f.WriteString("go\n")
	require.NoError(t, err)
	f.Close()
	err = c.Wait()
	t.Logf("probe: %v %s", err, out.String())
	if err != nil {
		var ee *corral.ExitError
		require.ErrorAs(t, err, &ee, "the command ran to its end: %s", out.String())
	}
	return err == nil
}

func TestSandboxBuiltAheadIsCheckedWhenTaken(t *testing.T) {
	eachDurableCase(t, true, func(t *testing.T, s *durableScene, cfg corral.Config, k durableKind, r durableReplacement, p string, guarded bool) bool {
		if !guarded && k.atStart {
			// Mounted when the command starts, whatever the host did
			// before: the control is the protection absent.
			cfg.AllowPlanting = []string{filepath.Base(p)}
		}
		sb := durableSandbox(t, cfg, guarded)
		require.NoError(t, sb.Warm(t.Context()))
		r.replace(t, p, k.dir)
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		c := sb.Command(ctx, "sh", "-c", k.probe)
		c.Env = []string{"PATH=/usr/bin:/bin", "P=" + p}
		c.Dir = "/"
		out, err := c.CombinedOutput()
		t.Logf("probe: %v %s", err, out)
		if err != nil {
			var ee *corral.ExitError
			require.ErrorAs(t, err, &ee, "the command ran: %s", out)
		}
		return err == nil
	})
}

// A workspace under /tmp is bound onto the sandbox's own /tmp, where the
// host cannot detach it; replaced on the host, the bind would go on showing
// the old directory. The caller compares what each bind showed at build
// with the host's path when it takes the sandbox.
func TestWorkspaceUnderTmpReplacedBeforeTake(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	require.NoError(t, err)
	for _, r := range durableReplacements {
		for _, guarded := range []bool{true, false} {
			name := r.name
			if !guarded {
				name += "/control without the guard"
			}
			t.Run(name, func(t *testing.T) {
				s := newDurableSceneIn(t, tmp)
				sb := durableSandbox(t, s.config(), guarded)
				require.NoError(t, sb.Warm(t.Context()))
				r.replace(t, s.ws, true)
				c := sb.Command(t.Context(), "sh", "-c", `echo written > "$P/written"`)
				c.Env = []string{"PATH=/usr/bin:/bin", "P=" + s.ws}
				out, err := c.CombinedOutput()
				t.Logf("probe: %v %s", err, out)
				landed := fileHas(filepath.Join(s.ws, "written"), "written")
				assert.Equal(t, guarded, landed, "the write landed in the host's workspace")
			})
		}
	}
}

// A workspace removed on the host after a sandbox was built ahead is a
// setup error naming it, not a command in a dead directory.
func TestWorkspaceRemovedBeforeTake(t *testing.T) {
	s := newDurableScene(t)
	cfg := s.config()
	sb := durableSandbox(t, cfg, true)
	require.NoError(t, sb.Warm(t.Context()))
	require.NoError(t, os.RemoveAll(s.ws))
	err := sb.Command(t.Context(), "true").Run()
	var se *corral.SetupError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, corral.LayerWorkspace, se.Layer)
	assert.Contains(t, err.Error(), s.ws+": no longer exists on the host")
}

func durableSandbox(t *testing.T, cfg corral.Config, guarded bool) *corral.Sandbox {
	t.Helper()
	sandboxtest.Require(t, cfg)
	if !guarded {
		restore := testhook.Disable(testhook.Guard)
		defer restore() // the sandboxes built ahead are built from New on
	}
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return sb
}

// mountsAt counts the mounts at p in a sandbox's mount table.
func mountsAt(t *testing.T, mountinfo, p string) int {
	f, err := os.Open(mountinfo)
	require.NoError(t, err)
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && fields[4] == p {
			n++
		}
	}
	return n
}

// waitMountsAt waits until p holds want mounts again in a sandbox's mount
// table, woken by the table's changes.
func waitMountsAt(ctx context.Context, t *testing.T, mountinfo, p string, want int) {
	f, err := os.Open(mountinfo)
	require.NoError(t, err)
	defer f.Close()
	for mountsAt(t, mountinfo, p) < want {
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}
		_, err := unix.Poll(fds, 100)
		if err != nil && err != syscall.EINTR {
			require.NoError(t, err)
		}
		require.NoError(t, ctx.Err(), "the guard did not mount %s again", p)
	}
}

// Moving a directory above a hidden path aside takes the hidden path's
// mount along without any change to the mount table; a new directory with
// a new secret in its place must be hidden too.
func TestHiddenPathsDirectoryMovedAsideWhileRunning(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		name := "guarded"
		if !guarded {
			name = "control without the guard"
		}
		t.Run(name, func(t *testing.T) {
			s := newDurableScene(t)
			cfg := s.config()
			conf := filepath.Join(s.ro, "conf")
			p := filepath.Join(conf, "token")
			require.NoError(t, os.Mkdir(conf, 0o755))
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
			cfg.HiddenPaths = []string{p}
			wrong := replaceWhileRunning(t, s, cfg, p, `grep -q rotated "$P"`, guarded, func() {
				require.NoError(t, os.Rename(conf, conf+".old"))
				require.NoError(t, os.Mkdir(conf, 0o755))
				require.NoError(t, os.WriteFile(p, []byte("rotated"), 0o600))
			})
			assert.Equal(t, !guarded, wrong, "the probe read the new secret")
		})
	}
}

// A hidden file the host replaces with a symlink cannot be covered again
// (a mount cannot sit on a symlink): the command is killed and the error
// names the path, rather than reading through the link.
func TestHiddenFileReplacedBySymlinkEndsTheCommand(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		name := "guarded"
		if !guarded {
			name = "control without the guard"
		}
		t.Run(name, func(t *testing.T) {
			s := newDurableScene(t)
			cfg := s.config()
			p := filepath.Join(s.ro, "token")
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(s.ro, "rotated"), []byte("rotated"), 0o644))
			cfg.HiddenPaths = []string{p}
			sb := durableSandbox(t, cfg, guarded)
			fifo := filepath.Join(s.ro, "go")
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			c := sb.Command(ctx, "sh", "-c", `read x < "$FIFO"; grep -q rotated "$P"`)
			c.Env = []string{"PATH=/usr/bin:/bin", "P=" + p, "FIFO=" + fifo}
			c.Dir = "/"
			require.NoError(t, c.Start())
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, os.Symlink("rotated", p+".new"))
			require.NoError(t, os.Rename(p+".new", p))
			if !guarded {
				// Guarded, the command is killed while it waits: no go.
				_, err = f.WriteString("go\n")
				require.NoError(t, err)
				f.Close()
			}
			err = c.Wait()
			t.Logf("wait: %v", err)
			if guarded {
				require.Error(t, err)
				assert.Contains(t, err.Error(), p)
				assert.Contains(t, err.Error(), "the command was killed")
			} else {
				assert.NoError(t, err, "without the guard the probe reads the new secret")
			}
		})
	}
}

// A hidden directory the host replaces with a file is covered with what
// the guard has for files when no hidden file gave it an empty one to
// clone (as on kernels before 6.15): a /dev/null nobody may open.
func TestHiddenDirectoryReplacedByFileWhileRunning(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		name := "guarded"
		if !guarded {
			name = "control without the guard"
		}
		t.Run(name, func(t *testing.T) {
			s := newDurableScene(t)
			cfg := s.config()
			p := filepath.Join(s.ro, "keys")
			require.NoError(t, os.Mkdir(p, 0o700))
			cfg.HiddenPaths = []string{p}
			wrong := replaceWhileRunning(t, s, cfg, p, `grep -q rotated "$P"`, guarded, func() {
				require.NoError(t, os.Remove(p))
				require.NoError(t, os.WriteFile(p, []byte("rotated"), 0o644))
			})
			assert.Equal(t, !guarded, wrong, "the probe read the new secret")
		})
	}
}

// A protected entry is guarded at each call that writes it, by its name:
// the host replacing it while a command runs (an editor's save, git's
// config.lock renamed over) lifts nothing. The control, with the name
// allowed, plants.
func TestProtectedNameWhileHostReplaces(t *testing.T) {
	for _, r := range durableReplacements {
		for _, guarded := range []bool{true, false} {
			name := r.name
			if !guarded {
				name += "/control with the name allowed"
			}
			t.Run(name, func(t *testing.T) {
				s := newDurableScene(t)
				cfg := s.config()
				p := filepath.Join(s.ws, ".bashrc")
				require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
				if !guarded {
					cfg.AllowPlanting = []string{".bashrc"}
				}
				sb := durableSandbox(t, cfg, true)
				fifo := filepath.Join(s.ro, "go")
				c := sb.Command(t.Context(), "sh", "-c", `read x < "$FIFO"; echo planted >> "$P"`)
				c.Env = []string{"PATH=/usr/bin:/bin", "P=" + p, "FIFO=" + fifo}
				c.Dir = "/"
				var out syncBuffer
				c.Stdout, c.Stderr = &out, &out
				require.NoError(t, c.Start())
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				require.NoError(t, err)
				r.replace(t, p, false)
				_, err = f.WriteString("go\n")
				require.NoError(t, err)
				f.Close()
				err = c.Wait()
				t.Logf("probe: %v %s", err, out.String())
				planted := fileHas(p, "planted")
				assert.Equal(t, !guarded, planted, "the command planted into the host's replaced .bashrc")
				assert.True(t, fileHas(p, "rotated"), "the host's own content stays")
			})
		}
	}
}
