package preflight

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/internal/testhook"
	"github.com/corralhq/corral/zones"
)

func dir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func names(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func TestRunPasses(t *testing.T) {
	cfg := corral.Config{Workspace: dir(t)}
	sandboxtest.Require(t, cfg)
	data := dir(t)
	a, err := zones.Resolve([]zones.Zone{{Name: "data", Path: data, Mode: zones.ReadWrite}}, []zones.Decl{{Name: "data", Mode: zones.ReadWrite}})
	require.NoError(t, err)
	ran := false
	r := Run(context.Background(), Spec{Config: cfg, Access: a, Checks: []Check{
		{Name: "account", Run: func(context.Context) error { ran = true; return nil }},
	}})
	require.True(t, r.OK, "%+v", r.Failures())
	require.NoError(t, r.Err())
	assert.True(t, ran)
	assert.Equal(t, []string{"config", "layers", "workspace", "zone data (rw)", "account"}, names(r.Checks))
}

// Every check runs and every failure is reported, each on one line.
func TestRunAggregates(t *testing.T) {
	ws := dir(t)
	ro := dir(t)
	missing := filepath.Join(ws, "missing")
	file := filepath.Join(ws, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	a, err := zones.Resolve([]zones.Zone{
		{Name: "gone", Path: missing, Mode: zones.ReadOnly},
		{Name: "notdir", Path: file, Mode: zones.ReadOnly},
		{Name: "fine", Path: ro, Mode: zones.ReadOnly},
	}, []zones.Decl{{Name: "gone"}, {Name: "notdir"}, {Name: "fine"}})
	require.NoError(t, err)
	block := make(chan struct{})
	defer close(block)
	r := Run(context.Background(), Spec{
		Config: corral.Config{Workspace: ws, WritablePaths: []string{missing}, ReadOnlyPaths: []string{ro}},
		Access: a,
		Checks: []Check{
			{Name: "account", Run: func(context.Context) error { return errors.New("not signed in\nrun login") }},
			{Name: "slow", Timeout: time.Millisecond, Run: func(context.Context) error { <-block; return nil }},
			{Name: "nil"},
			{Name: "panics", Run: func(context.Context) error { panic("boom") }},
			{Name: "fine", Run: func(context.Context) error { return nil }},
		},
	})
	require.False(t, r.OK)
	var pe *Error
	require.ErrorAs(t, r.Err(), &pe)
	failed := map[string]string{}
	for _, f := range pe.Failures {
		failed[f.Name] = f.Reason
		assert.NotContains(t, f.Reason, "\n")
	}
	assert.Contains(t, failed["config"], missing)
	assert.Equal(t, missing+" does not exist", failed["writable "+missing])
	assert.Equal(t, missing+" does not exist", failed["zone gone (ro)"])
	assert.Equal(t, file+" is not a directory", failed["zone notdir (ro)"])
	assert.Equal(t, "not signed in; run login", failed["account"])
	assert.Equal(t, "did not finish within 1ms", failed["slow"])
	assert.Equal(t, "no Run function", failed["nil"])
	assert.Equal(t, "check panicked: boom", failed["panics"])
	for _, ok := range []string{"workspace", "read-only " + ro, "zone fine (ro)", "fine"} {
		assert.NotContains(t, failed, ok)
		assert.Contains(t, names(r.Checks), ok)
	}
	assert.Equal(t, len(failed), len(r.Failures()))
	assert.True(t, strings.HasPrefix(r.Err().Error(), "preflight failed: config: "), r.Err().Error())
}

// A policy this host could only meet by falling back fails, even when the
// config allows the fallback: preflight has no degraded mode.
func TestRunNoFallback(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the Linux ladder")
	}
	defer testhook.Disable(corral.LayerUserNS)()
	cfg := corral.Config{Workspace: dir(t), Fallback: corral.FallbackWarn}
	r := Run(context.Background(), Spec{Config: cfg})
	require.False(t, r.OK)
	require.Len(t, r.Failures(), 1)
	assert.Equal(t, "layers", r.Failures()[0].Name)
	assert.Contains(t, r.Failures()[0].Reason, string(corral.LayerUserNS))
	// Control: the doctor itself would let the config run, weaker.
	d, err := corral.Doctor(cfg)
	require.NoError(t, err)
	assert.True(t, d.OK)
}

func TestUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write anywhere: access(2) says yes")
	}
	ro := dir(t)
	require.NoError(t, os.Chmod(ro, 0o555))
	a, err := zones.Resolve([]zones.Zone{{Name: "data", Path: ro, Mode: zones.ReadWrite}}, []zones.Decl{{Name: "data", Mode: zones.ReadWrite}})
	require.NoError(t, err)
	r := Run(context.Background(), Spec{Config: corral.Config{Workspace: dir(t)}, Access: a})
	require.False(t, r.OK)
	assert.Equal(t, "zone data (rw)", r.Failures()[0].Name)
	assert.Contains(t, r.Failures()[0].Reason, "is not writable")
}

func TestSandboxCommand(t *testing.T) {
	cfg := corral.Config{Workspace: dir(t)}
	sandboxtest.Require(t, cfg)
	r := Run(context.Background(), Spec{Config: cfg, Checks: []Check{
		SandboxCommand("ok", cfg, "sh", "-c", "test -d /proc/self"),
		SandboxCommand("account", cfg, "sh", "-c", "echo working; echo 'Unable to locate credentials' >&2; exit 255"),
		// The check runs inside: its parent is the sandbox's init, PID 1.
		SandboxCommand("inside", cfg, "sh", "-c", "test $PPID = 1"),
	}})
	failed := map[string]string{}
	for _, f := range r.Failures() {
		failed[f.Name] = f.Reason
	}
	assert.Equal(t, map[string]string{"account": `sh -c echo working; echo 'Unable to locate credentials' >&2; exit 255: exit status 255: Unable to locate credentials`}, failed)
}

func TestPrimitives(t *testing.T) {
	base := corral.Config{Workspace: "/w"}
	p := PrimitivesOf(base, "linux")
	assert.Equal(t, "none", p.Changeset)
	assert.Equal(t, "local", p.Platform)
	assert.Equal(t, "host", p.Outputs)
	assert.Contains(t, p.Isolation, "kernel sandbox")
	assert.Len(t, p.Lines(), 5)
	// Each setting moves its own primitive and no other.
	changes := map[string]func(c *corral.Config){
		"changeset": func(c *corral.Config) { c.Changeset = "/cs" },
		"outputs":   func(c *corral.Config) { c.Network = corral.NetworkNone },
		"isolation": func(c *corral.Config) { c.Mode = corral.ModeDisabled },
	}
	for name, change := range changes {
		c := base
		change(&c)
		q := PrimitivesOf(c, "linux")
		diff := 0
		for i, line := range q.Lines() {
			if line != p.Lines()[i] {
				diff++
				assert.True(t, strings.HasPrefix(line, name), "%s moved %s", name, line)
			}
		}
		assert.Equal(t, 1, diff, name)
	}
	d := PrimitivesOf(base, "darwin")
	assert.Equal(t, "darwin", strings.SplitN(d.Software, "/", 2)[0])
	assert.Equal(t, p.Changeset+p.Platform+p.Outputs, d.Changeset+d.Platform+d.Outputs)
}

// The config is checked with the zones mounted: a zone that is the
// workspace cannot be.
func TestRunZoneConfig(t *testing.T) {
	ws := dir(t)
	project := []zones.Zone{{Name: "data", Path: ws, Mode: zones.ReadWrite}}
	a, err := zones.Resolve(project, []zones.Decl{{Name: "data", Mode: zones.ReadWrite}})
	require.NoError(t, err)
	r := Run(context.Background(), Spec{Config: corral.Config{Workspace: ws}, Access: a, Project: project})
	require.False(t, r.OK)
	assert.Equal(t, "config", r.Failures()[0].Name)
	// Control: the same zone elsewhere passes the config check.
	project[0].Path = dir(t)
	a, err = zones.Resolve(project, []zones.Decl{{Name: "data", Mode: zones.ReadWrite}})
	require.NoError(t, err)
	r = Run(context.Background(), Spec{Config: corral.Config{Workspace: ws}, Access: a, Project: project})
	assert.True(t, r.Checks[0].OK, "%+v", r.Checks[0])
}

// TestRunNetworkNames: with NetworkAllow every exact allowed domain must
// resolve; a wildcard names no host and is not looked up; another network
// mode checks nothing (the control).
func TestRunNetworkNames(t *testing.T) {
	ws := dir(t)
	var asked []string
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		asked = append(asked, host)
		if host == "registry.example" {
			return []netip.Addr{netip.MustParseAddr("192.0.2.7")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	cfg := corral.Config{Workspace: ws, Network: corral.NetworkAllow,
		AllowedDomains: []string{"registry.example:443", "gone.example", "*.cdn.example", "registry.example"}}
	r := Run(context.Background(), Spec{Config: cfg, Resolve: resolve})
	results := map[string]Result{}
	for _, c := range r.Checks {
		results[c.Name] = c
	}
	assert.True(t, results["network registry.example"].OK)
	assert.False(t, results["network gone.example"].OK)
	assert.Equal(t, "allowed domain gone.example does not resolve: lookup gone.example: no such host", results["network gone.example"].Reason)
	assert.Equal(t, []string{"registry.example", "gone.example"}, asked, "each name once, no wildcard")

	asked = nil
	cfg.Network = corral.NetworkNone
	cfg.AllowedDomains = nil
	r = Run(context.Background(), Spec{Config: cfg, Resolve: resolve})
	assert.Empty(t, asked)
	for _, c := range r.Checks {
		assert.NotContains(t, c.Name, "network")
	}
}
