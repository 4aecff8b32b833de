package corral

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/limits"
)

func TestLimitsSet(t *testing.T) {
	var l Limits
	for _, tc := range []struct {
		name  Limit
		value string
		err   string
	}{
		{LimitMemory, "2G", ""}, {LimitPids, "512", ""}, {LimitCPUs, "1.5", ""}, {LimitTmpSize, "64M", ""},
		{LimitFileSize, "none", ""}, {LimitOpenFiles, "256", ""}, {LimitCPUTime, "90s", ""},
		{LimitMemory, "2Q", "want a size such as 512M or 2G, or none"},
		{LimitMemory, "0", "more than zero, or none"},
		{LimitPids, "-3", "whole number more than zero"},
		{LimitPids, "1.5", "whole number"},
		{LimitCPUs, "0", "number of CPUs more than zero"},
		{LimitCPUs, "NaN", "number of CPUs"},
		{LimitCPUTime, "10", "duration"},
		{Limit("speed"), "1", "unknown limit"},
	} {
		err := l.Set(tc.name, tc.value)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%s %s", tc.name, tc.value)
		} else {
			assert.NoError(t, err, "%s %s", tc.name, tc.value)
		}
	}
	assert.Equal(t, Limits{Memory: 2 << 30, Pids: 512, CPUs: 1.5, TmpSize: 64 << 20, FileSize: NoLimit, OpenFiles: 256, CPUTime: 90 * time.Second}, l)
	assert.Equal(t, Limits{Memory: 1, Pids: 2, CPUs: NoLimit, TmpSize: 4}, Limits{Memory: 1, Pids: 3, TmpSize: 4}.Merge(Limits{Pids: 2, CPUs: NoLimit}))
}

func TestLimitsResolve(t *testing.T) {
	ls, err := Limits{}.resolve()
	require.NoError(t, err)
	assert.Equal(t, limits.Set{Pids: 4096, TmpSize: 1 << 30}, ls.set, "the defaults")
	assert.Empty(t, ls.asked)

	ls, err = Limits{Pids: NoLimit, TmpSize: 64 << 20, CPUTime: 1500 * time.Millisecond, CPUs: 2}.resolve()
	require.NoError(t, err)
	assert.Equal(t, limits.Set{TmpSize: 64 << 20, CPUTime: 2, CPUs: 2}, ls.set)
	assert.ElementsMatch(t, []limits.Name{limits.Pids, limits.TmpSize, limits.CPUTime, limits.CPUs}, ls.asked)

	for _, bad := range []Limits{{Memory: -2}, {Pids: -5}, {CPUs: -0.5}, {CPUTime: -time.Second}, {OpenFiles: -9}} {
		_, err := bad.resolve()
		var ce *ConfigError
		assert.ErrorAs(t, err, &ce, "%+v", bad)
	}
}

func TestPlanLimits(t *testing.T) {
	full := ladder.LimitHost{Rung: RungFull, NoCgroup: "no cgroup here"}
	root := ladder.LimitHost{Rung: RungFull, Root: true, NoCgroup: "no cgroup here"}
	bare := ladder.LimitHost{Rung: RungLandlock, NoCgroup: "no cgroup here"}
	mustResolve := func(l Limits) limitSpec { ls, err := l.resolve(); require.NoError(t, err); return ls }

	// Defaults the host cannot enforce are left out quietly.
	p, err := planLimits(mustResolve(Limits{}), root, FallbackFail)
	require.NoError(t, err)
	assert.Equal(t, limits.Set{TmpSize: 1 << 30}, p.set)
	assert.Empty(t, p.warning)
	p, err = planLimits(mustResolve(Limits{}), bare, FallbackFail)
	require.NoError(t, err)
	assert.Equal(t, limits.Set{}, p.set)

	// Asked for, they fail the sandbox or warn once.
	_, err = planLimits(mustResolve(Limits{Pids: 64}), root, FallbackFail)
	var se *SetupError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, LayerLimits, se.Layer)
	assert.Contains(t, err.Error(), "--pids 64 cannot be enforced: the kernel exempts root from RLIMIT_NPROC, and no cgroup here")
	p, err = planLimits(mustResolve(Limits{CPUs: 1, TmpSize: 8 << 20, FileSize: 1 << 20}), bare, FallbackWarn)
	require.NoError(t, err)
	assert.Equal(t, limits.Set{FileSize: 1 << 20}, p.set)
	assert.Equal(t, "corral: running without the limits --cpus 1 (only a cgroup can share out CPU time, and no cgroup here); "+
		"--tmp-size 8M (rung landlock has no private /tmp: the command's temp dir is on the host's filesystem)", p.warning)

	p, err = planLimits(mustResolve(Limits{Pids: 64}), full, FallbackFail)
	require.NoError(t, err)
	assert.Equal(t, int64(64), p.set.Pids)
	for _, st := range p.statuses {
		if st.Name == LimitPids {
			assert.Equal(t, LimitStatus{Name: LimitPids, Available: true, Mechanism: "RLIMIT_NPROC in the sandbox's user namespace, on the command's tasks alone", Value: "64"}, st)
		}
	}
	// With a cgroup, pids and CPUs hold for root too.
	withCg := ladder.LimitHost{Rung: RungFull, Root: true, Cgroup: &limits.Hierarchy{Dir: "/sys/fs/cgroup/x"}}
	p, err = planLimits(mustResolve(Limits{Pids: 64, CPUs: 0.5}), withCg, FallbackFail)
	require.NoError(t, err)
	assert.Equal(t, 0.5, p.set.CPUs)

	_, err = planLimits(mustResolve(Limits{FileSize: 1 << 20}), ladder.LimitHost{Rung: RungSeatbelt}, FallbackFail)
	assert.ErrorContains(t, err, "--file-size 1M cannot be enforced: rung seatbelt enforces no limits")
}

func TestLimitViolations(t *testing.T) {
	ls, err := Limits{Pids: 512}.resolve()
	require.NoError(t, err)
	assert.Equal(t, []Violation{
		{Kind: ViolationLimit, Target: "pids", Rule: "--pids 512", Count: 1},
		{Kind: ViolationLimit, Target: "tmp-size", Rule: "--tmp-size 1G (the default)", Count: 1},
	}, limitViolations([]limits.Name{limits.Pids, limits.TmpSize}, ls))
}
