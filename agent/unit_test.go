package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/config"
)

func parse(t *testing.T, doc string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(doc), filepath.Join(t.TempDir(), "agents.toml"))
	require.NoError(t, err)
	return cfg
}

const resolveDoc = `
[defaults.sandbox]
mode = "non-main"
scope = "session"

[[agents]]
id = "coder"
main_session = "desk"

[[agents]]
id = "team"
[agents.sandbox]
mode = "all"
scope = "agent"
workspace_access = "ro"

[[agents]]
id = "pool"
[agents.sandbox]
mode = "enabled"
scope = "shared"

[[agents]]
id = "free"
[agents.sandbox]
mode = "off"
`

func TestResolve(t *testing.T) {
	rt, err := New(parse(t, resolveDoc), Options{StateDir: t.TempDir()})
	require.NoError(t, err)
	for _, tt := range []struct {
		agent, session string
		sandboxed      bool
		key            string
	}{
		{"coder", "desk", false, ""},
		{"coder", "main", true, "coder/main"}, // "main" is not coder's main session
		{"coder", "chat-1", true, "coder/chat-1"},
		{"team", "chat-1", true, "agent:team"},
		{"team", "chat-2", true, "agent:team"},
		{"team", "main", true, "agent:team"},
		{"pool", "x", true, "shared"},
		{"free", "x", false, ""},
		{"free", "main", false, ""},
	} {
		r, err := rt.Resolve(tt.agent, tt.session)
		require.NoError(t, err)
		assert.Equal(t, tt.sandboxed, r.Sandboxed, "%s %s", tt.agent, tt.session)
		assert.Equal(t, tt.key, r.Key, "%s %s", tt.agent, tt.session)
	}
	r, _ := rt.Resolve("team", "x")
	assert.Equal(t, config.AccessRO, r.Access)
	_, err = rt.Resolve("nobody", "x")
	assert.ErrorContains(t, err, `no agent "nobody"`)
	_, err = rt.Resolve("coder", "")
	assert.ErrorContains(t, err, "empty session key")
}

func TestConfigHash(t *testing.T) {
	cfg := parse(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"none\"\n")
	base := cfg.Agents[0].Sandbox
	h := ConfigHash(base, "/w")
	assert.Equal(t, h, ConfigHash(base, "/w"), "stable")
	assert.NotEqual(t, h, ConfigHash(base, "/other"), "the workspace shapes the sandbox")
	for name, change := range map[string]func(*config.Sandbox){
		"network":  func(s *config.Sandbox) { s.Network = "host" },
		"env":      func(s *config.Sandbox) { s.Env = []string{"X=1"} },
		"access":   func(s *config.Sandbox) { s.WorkspaceAccess = config.AccessNone },
		"writable": func(s *config.Sandbox) { s.WritablePaths = []string{"/x"} },
		"home":     func(s *config.Sandbox) { s.PersistHome = false },
	} {
		s := base
		change(&s)
		assert.NotEqual(t, h, ConfigHash(s, "/w"), name)
	}
	for name, change := range map[string]func(*config.Sandbox){
		"prune": func(s *config.Sandbox) { s.PruneIdle = time.Minute },
		"media": func(s *config.Sandbox) { s.MediaDir = "/m" },
		"file":  func(s *config.Sandbox) { s.ConfigFile = "/other.toml" },
	} {
		s := base
		change(&s)
		assert.Equal(t, h, ConfigHash(s, "/w"), "%s does not shape the sandbox", name)
	}
}

// clock is a fake clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// seed records sandboxes in rt's registry with state directories, as
// Session would, without building any.
func seed(t *testing.T, rt *Runtime, agent string, keys ...string) {
	t.Helper()
	require.NoError(t, rt.reg.Update(func(es []Entry) ([]Entry, bool, error) {
		for _, k := range keys {
			now := rt.now()
			es = append(es, Entry{Key: k, Slug: Slug(k), Agent: agent, Created: now, LastUsed: now, ConfigHash: "h"})
			d := rt.dirsOf(Slug(k))
			require.NoError(t, os.MkdirAll(filepath.Join(d.tmp, "x"), 0o700))
			// overlayfs leaves a work directory nobody may list
			require.NoError(t, os.MkdirAll(filepath.Join(d.home, "work", "work"), 0o700))
			require.NoError(t, os.Chmod(filepath.Join(d.home, "work", "work"), 0))
		}
		return es, true, nil
	}))
}

func keys(t *testing.T, rt *Runtime) []string {
	es, err := rt.reg.List()
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func touch(t *testing.T, rt *Runtime, key string) {
	require.NoError(t, rt.reg.Update(func(es []Entry) ([]Entry, bool, error) {
		es[find(es, key)].LastUsed = rt.now()
		return es, true, nil
	}))
}

func TestPruneIdleAndAge(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := parse(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nprune_idle = \"2h\"\nprune_max_age = \"10h\"\n[[agents]]\nid = \"keep\"\n[agents.sandbox]\nprune_idle = \"0\"\nprune_max_age = \"0\"\n")
	rt, err := New(cfg, Options{StateDir: t.TempDir(), Now: c.now})
	require.NoError(t, err)
	seed(t, rt, "a", "idle", "busy")
	seed(t, rt, "keep", "forever")
	seed(t, rt, "", "one-off")

	c.add(90 * time.Minute)
	touch(t, rt, "busy")
	removed, err := rt.Prune()
	require.NoError(t, err)
	assert.Empty(t, removed, "nothing idle past 2h yet")

	c.add(time.Hour) // idle: 2h30 unused; busy: 1h
	removed, err = rt.Prune()
	require.NoError(t, err)
	require.Len(t, removed, 1)
	assert.Equal(t, "idle", removed[0].Key)
	assert.NoDirExists(t, rt.dirsOf(Slug("idle")).root, "its state goes with it")
	assert.DirExists(t, rt.dirsOf(Slug("busy")).root)

	for range 8 { // busy stays in use, past its 10h age
		c.add(time.Hour)
		touch(t, rt, "busy")
	}
	c.add(14 * time.Hour) // 24h30 since the one-off's last use
	removed, err = rt.Prune()
	require.NoError(t, err)
	assert.Equal(t, []string{"forever"}, keys(t, rt), "busy aged out at 10h, the one-off idled out at 24h; rules of 0 keep forever")
	assert.Len(t, removed, 2)
}

func TestAutomaticPruneAtMostEveryFiveMinutes(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	rt, err := New(parse(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nprune_idle = \"1m\"\n"), Options{StateDir: t.TempDir(), Now: c.now})
	require.NoError(t, err)
	_, err = rt.maybePrune() // the first runs
	require.NoError(t, err)
	seed(t, rt, "a", "s")
	c.add(2 * time.Minute)
	removed, err := rt.maybePrune()
	require.NoError(t, err)
	assert.Empty(t, removed, "throttled: the last prune was 2 minutes ago")
	c.add(3 * time.Minute)
	removed, err = rt.maybePrune()
	require.NoError(t, err)
	assert.Len(t, removed, 1, "5 minutes on, it runs")
	// Control: on demand it is never throttled.
	seed(t, rt, "a", "t")
	c.add(2 * time.Minute)
	removed, err = rt.Prune()
	require.NoError(t, err)
	assert.Len(t, removed, 1)
}

func TestRemoveAndRecreate(t *testing.T) {
	rt, err := New(parse(t, "[[agents]]\nid = \"a\"\n"), Options{StateDir: t.TempDir()})
	require.NoError(t, err)
	seed(t, rt, "a", "x", "y")
	d := rt.dirsOf(Slug("y"))
	require.NoError(t, os.MkdirAll(d.workspace, 0o700))
	require.NoError(t, rt.Recreate("y"))
	assert.NoDirExists(t, d.home)
	assert.NoDirExists(t, d.tmp)
	assert.DirExists(t, d.workspace, "its own workspace stays")
	es, _ := rt.reg.List()
	assert.Equal(t, "", es[find(es, "y")].ConfigHash)

	require.NoError(t, rt.Remove("x"))
	assert.Equal(t, []string{"y"}, keys(t, rt))
	assert.ErrorContains(t, rt.Remove("x"), `no sandbox "x"`)
	assert.ErrorContains(t, rt.Recreate("nope"), `no sandbox "nope"`)
}

const registryChildEnv = "CORRAL_AGENT_REGISTRY_CHILD"

// registryChild adds its increments to a counter entry, one change at a
// time, as a separate corral process would.
func registryChild() int {
	path, n := os.Getenv(registryChildEnv), 50
	reg := OpenRegistry(path)
	for i := range n {
		err := reg.Update(func(es []Entry) ([]Entry, bool, error) {
			j := find(es, "counter")
			if j < 0 {
				es = append(es, Entry{Key: "counter"})
				j = len(es) - 1
			}
			c, _ := strconv.Atoi(es[j].ConfigHash)
			es[j].ConfigHash = strconv.Itoa(c + 1)
			es = append(es, Entry{Key: fmt.Sprintf("p%d-%d", os.Getpid(), i)})
			return es, true, nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// Processes changing the registry at once lose no change and never see a
// torn file.
func TestRegistryConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandboxes.json")
	const procs = 6
	var cmds []*exec.Cmd
	for range procs {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), registryChildEnv+"="+path)
		c.Stderr = os.Stderr
		require.NoError(t, c.Start())
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		require.NoError(t, c.Wait())
	}
	es, err := OpenRegistry(path).List()
	require.NoError(t, err)
	i := find(es, "counter")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, strconv.Itoa(procs*50), es[i].ConfigHash, "every increment kept")
	assert.Len(t, es, procs*50+1, "every entry kept")
}

// An automatic prune leaves an agent its config does not know alone; an
// explicit one applies the defaults.
func TestAutomaticPruneKeepsUnknownAgents(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	rt, err := New(&config.Config{}, Options{StateDir: t.TempDir(), Now: c.now})
	require.NoError(t, err)
	seed(t, rt, "elsewhere", "theirs")
	seed(t, rt, "", "one-off")
	c.add(48 * time.Hour)
	removed, err := rt.maybePrune()
	require.NoError(t, err)
	require.Len(t, removed, 1)
	assert.Equal(t, "one-off", removed[0].Key)
	removed, err = rt.Prune()
	require.NoError(t, err)
	require.Len(t, removed, 1)
	assert.Equal(t, "theirs", removed[0].Key)
}
