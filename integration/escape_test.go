//go:build linux

package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// attack is one escape attempt. script runs with sh -c in the workspace,
// with $WS, $DATA, $SECRET, $OUTSIDE and the variables setup returns.
// escaped judges the outcome from the host.
type attack struct {
	name    string
	setup   func(t *testing.T, w *world) []string
	script  string
	escaped func(w *world, r result) bool
}

// probePath is a fresh name in dir for a file an attack tries to create;
// it is removed when the test ends.
func probePath(t *testing.T, dir string) string {
	p := filepath.Join(dir, fmt.Sprintf("corral-probe-%d", rand.Uint64()))
	t.Cleanup(func() { os.Remove(p) })
	return p
}

// writeTo is an attack that writes a file at a path chosen by target.
func writeTo(name string, target func(t *testing.T, w *world) string) attack {
	return attack{
		name: name,
		setup: func(t *testing.T, w *world) []string {
			return []string{"TARGET=" + target(t, w)}
		},
		script: `echo escaped > "$TARGET"`,
		escaped: func(w *world, r result) bool {
			return fileHas(varOf(w, "TARGET"), "escaped")
		},
	}
}

func varOf(w *world, name string) string {
	for _, kv := range w.vars {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func homeDir(t *testing.T) string {
	u, err := user.Current()
	require.NoError(t, err)
	return u.HomeDir
}

func fileAttacks() []attack {
	attacks := []attack{
		writeTo("write a sibling of the workspace", func(t *testing.T, w *world) string {
			return probePath(t, w.outside)
		}),
		writeTo("write /var/tmp", func(t *testing.T, w *world) string {
			return probePath(t, "/var/tmp")
		}),
		writeTo("write the home directory", func(t *testing.T, w *world) string {
			return probePath(t, homeDir(t))
		}),
		writeTo("leak through /tmp", func(t *testing.T, w *world) string {
			return probePath(t, "/tmp")
		}),
		writeTo("write the read-only data dir under the writable workspace", func(t *testing.T, w *world) string {
			return probePath(t, w.data)
		}),
		{
			name: "remount the data dir read-write, then write it",
			script: `mount -o remount,rw,bind "$DATA" 2>/dev/null; umount -l "$DATA" 2>/dev/null
				echo escaped > "$DATA/planted"`,
			escaped: func(w *world, r result) bool { return fileHas(filepath.Join(w.data, "planted"), "escaped") },
		},
		{
			name:    "read a hidden file",
			script:  `cat "$SECRET/token"`,
			escaped: func(w *world, r result) bool { return strings.Contains(r.stdout, "s3cr3t-payload") },
		},
		{
			name:    "list a hidden directory",
			script:  `ls -a "$SECRET"`,
			escaped: func(w *world, r result) bool { return strings.Contains(r.stdout, "token") },
		},
		{
			name:    "write through a symlink planted in the workspace",
			script:  `ln -s "$OUTSIDE" "$WS/out" && echo escaped > "$WS/out/pwned"`,
			escaped: func(w *world, r result) bool { return fileHas(filepath.Join(w.outside, "pwned"), "escaped") },
		},
		{
			name: "write through a symlink that was already there",
			setup: func(t *testing.T, w *world) []string {
				require.NoError(t, os.Symlink(w.outside, filepath.Join(w.ws, "out")))
				return nil
			},
			script:  `echo escaped > "$WS/out/pwned"`,
			escaped: func(w *world, r result) bool { return fileHas(filepath.Join(w.outside, "pwned"), "escaped") },
		},
		{
			name:    "copy a secret out with cp",
			script:  `cp "$SECRET/token" "$WS/copied"`,
			escaped: func(w *world, r result) bool { return fileHas(filepath.Join(w.ws, "copied"), "s3cr3t") },
		},
	}
	if os.Geteuid() == 0 {
		attacks = append(attacks, writeTo("write /etc", func(t *testing.T, w *world) string {
			return probePath(t, "/etc")
		}))
	}
	return append(attacks, plantingAttacks()...)
}

// plantingAttacks try to plant code that runs later outside the sandbox.
func plantingAttacks() []attack {
	plant := func(name, rel string) attack {
		return attack{
			name: "plant " + rel,
			setup: func(t *testing.T, w *world) []string {
				p := filepath.Join(w.ws, rel)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				if strings.HasSuffix(rel, "hooks") {
					require.NoError(t, os.Mkdir(p, 0o755))
					return []string{"TARGET=" + filepath.Join(p, "pre-commit")}
				}
				require.NoError(t, os.WriteFile(p, []byte("# original\n"), 0o644))
				return []string{"TARGET=" + p}
			},
			script: `echo escaped >> "$TARGET"`,
			escaped: func(w *world, r result) bool {
				return fileHas(varOf(w, "TARGET"), "escaped")
			},
		}
	}
	return []attack{
		plant("hook", ".git/hooks"),
		plant("git config", ".git/config"),
		plant("bashrc", ".bashrc"),
		plant("profile", ".profile"),
		plant("vscode tasks", ".vscode/tasks.json"),
	}
}

func processAttacks() []attack {
	return []attack{
		{
			name:   "kill a host process",
			setup:  victim,
			script: `kill -9 "$VICTIM"`,
			escaped: func(w *world, r result) bool {
				return diedWithin(w, 2*time.Second)
			},
		},
		{
			name:    "read a host process's environment",
			setup:   victim,
			script:  `cat "/proc/$VICTIM/environ"`,
			escaped: func(w *world, r result) bool { return strings.Contains(r.stdout, "victim-token-") },
		},
		{
			name:    "create a nested user namespace",
			script:  `unshare -Ur true`,
			escaped: func(w *world, r result) bool { return r.code == 0 },
		},
	}
}

// victim starts a host process holding a secret in its environment and
// exposes its pid as $VICTIM.
func victim(t *testing.T, w *world) []string {
	c := exec.Command("sleep", "300")
	c.Env = []string{fmt.Sprintf("VICTIM_TOKEN=victim-token-%d", rand.Uint64())}
	require.NoError(t, c.Start())
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	victims[w] = done
	t.Cleanup(func() { c.Process.Kill(); <-done })
	return []string{fmt.Sprintf("VICTIM=%d", c.Process.Pid)}
}

// victims maps a world to the channel closed when its victim exits. Tests
// using it do not run in parallel.
var victims = map[*world]chan struct{}{}

func diedWithin(w *world, d time.Duration) bool {
	select {
	case <-victims[w]:
		return true
	case <-time.After(d):
		return false
	}
}

func TestEscapes(t *testing.T) {
	attacks := append(fileAttacks(), processAttacks()...)
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			bare := newWorld(t)
			if a.setup != nil {
				bare.vars = append(bare.vars, a.setup(t, bare)...)
			}
			r := bare.bare(a.script)
			require.True(t, a.escaped(bare, r), "the probe must work without the sandbox:\n%s", r)

			boxed := newWorld(t)
			if a.setup != nil {
				boxed.vars = append(boxed.vars, a.setup(t, boxed)...)
			}
			r = boxed.sandboxed(boxed.config(), a.script)
			assert.False(t, a.escaped(boxed, r), "escaped the sandbox:\n%s", r)
		})
	}
}

// The second command runs in a sandbox built before the first one created
// the repository; its hooks must still be protected.
func TestPlantingPathsCreatedByAnEarlierCommand(t *testing.T) {
	script := `git init -q`
	plant := `mkdir -p .git/hooks && echo escaped > .git/hooks/pre-commit`

	bare := newWorld(t)
	require.Equal(t, 0, bare.bare(script).code)
	bare.bare(plant)
	require.True(t, fileHas(filepath.Join(bare.ws, ".git/hooks/pre-commit"), "escaped"), "the probe must work without the sandbox")

	boxed := newWorld(t)
	sb := newSandbox(t, boxed.config())
	require.NoError(t, sb.Warm(context.Background())) // its ready sandboxes are built before .git exists
	run := func(s string) {
		c := sb.Command(context.Background(), "sh", "-c", s)
		c.Env = boxed.env()
		c.Run()
	}
	run(script)
	require.FileExists(t, filepath.Join(boxed.ws, ".git/HEAD"), "the first command may create a repository")
	run(plant)
	assert.False(t, fileHas(filepath.Join(boxed.ws, ".git/hooks/pre-commit"), "escaped"), "planted a hook")
}

// A mount below / must be read-only too: the root is bound with every
// submount. The test mounts a writable tmpfs in a namespace of its own and
// builds the sandbox from there.
func TestSubmountsAreReadOnly(t *testing.T) {
	probe := func(bare bool) string {
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), roleEnv+"=submount", "CORRAL_TEST_DIR="+realDirOutsideTmp(t), "CORRAL_TEST_WS="+realDir(t))
		if bare {
			c.Env = append(c.Env, "CORRAL_TEST_BARE=1")
		}
		c.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
		c.Stderr = os.Stderr
		out, err := c.Output()
		require.NoError(t, err)
		return string(out)
	}
	require.Equal(t, "written\n", probe(true), "the probe must work without the sandbox")
	sandboxtest.Require(t, corral.Config{})
	assert.Empty(t, probe(false), "wrote into a host submount")
}

// realDirOutsideTmp is a fresh directory in the user's home, not under /tmp:
// the sandbox sees the host's copy of it rather than the private /tmp.
func realDirOutsideTmp(t *testing.T) string {
	d, err := os.MkdirTemp(homeDir(t), ".corral-submount-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
