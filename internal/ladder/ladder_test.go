package ladder

import (
	"strings"
	"testing"

	"github.com/corralhq/corral/internal/testhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeHost has every layer, Landlock at abi, minus the ones named.
func fakeHost(abi int, missing ...Layer) *Host {
	h := &Host{LandlockABI: abi}
	for _, n := range []Layer{LayerUserNS, LayerMountNS, LayerPIDNS, LayerKernelNS, LayerNetNS, LayerProc, LayerOverlay, LayerLandlock, LayerSeccomp} {
		l := LayerStatus{Name: n, Available: true}
		for _, m := range missing {
			if m == n {
				l = LayerStatus{Name: n, Reason: "no " + string(n) + " here"}
			}
		}
		if n == LayerLandlock && abi == 0 {
			l = LayerStatus{Name: n, Reason: "no landlock here"}
		}
		h.Layers = append(h.Layers, l)
	}
	return h
}

func TestChooseRung(t *testing.T) {
	warn := Needs{Fallback: FallbackWarn}
	cases := []struct {
		name     string
		h        *Host
		n        Needs
		rung     Rung
		landlock bool
		scope    bool
		seccomp  bool
		without  []Layer
	}{
		{"everything", fakeHost(7), Needs{Fallback: FallbackFail}, RungFull, true, true, true, nil},
		{"old landlock is enough for full", fakeHost(3), Needs{Fallback: FallbackFail}, RungFull, true, false, true, nil},
		{"no user namespaces", fakeHost(7, LayerUserNS), warn, RungLandlock, true, true, true, []Layer{LayerUserNS}},
		{"no fresh proc", fakeHost(7, LayerProc), warn, RungLandlock, true, true, true, []Layer{LayerProc}},
		{"no net namespace, host network", fakeHost(7, LayerNetNS), Needs{Fallback: FallbackFail}, RungFull, true, true, true, nil},
		{"no net namespace, no network", fakeHost(7, LayerNetNS), Needs{NetNone: true, Fallback: FallbackWarn}, RungLandlock, true, true, true, []Layer{LayerNetNS}},
		{"no landlock, namespaces", fakeHost(0), warn, RungFull, false, false, true, []Layer{LayerLandlock}},
		{"no seccomp", fakeHost(7, LayerSeccomp), warn, RungFull, true, true, false, []Layer{LayerSeccomp}},
		{"landlock without scoping cannot stand alone", fakeHost(5, LayerUserNS), warn, RungNone, false, false, false, []Layer{LayerUserNS}},
		{"nothing", fakeHost(0, LayerUserNS, LayerSeccomp), warn, RungNone, false, false, false, []Layer{LayerUserNS, LayerLandlock, LayerSeccomp}},
		{"unix sockets on the host network want scoping", fakeHost(5), Needs{UnixSockets: true, Fallback: FallbackWarn}, RungFull, true, false, true, []Layer{LayerLandlock}},
		{"unix sockets without network do not", fakeHost(5), Needs{UnixSockets: true, NetNone: true, Fallback: FallbackFail}, RungFull, true, false, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Choose(c.h, c.n)
			require.NoError(t, err)
			assert.Equal(t, c.rung, p.Rung)
			assert.Equal(t, c.landlock, p.Landlock, "landlock")
			assert.Equal(t, c.scope, p.Scope, "scope")
			assert.Equal(t, c.seccomp, p.Seccomp, "seccomp")
			var without []Layer
			for _, l := range p.Without {
				without = append(without, l.Name)
			}
			assert.Equal(t, c.without, without)
			if p.Landlock {
				assert.Equal(t, c.h.LandlockABI, p.ABI)
			}
		})
	}
}

func TestRungWarning(t *testing.T) {
	p, err := Choose(fakeHost(7, LayerUserNS), Needs{Fallback: FallbackWarn})
	require.NoError(t, err)
	assert.Equal(t, "corral: sandbox runs on rung landlock, without user namespace (no user namespace here)", p.Warning())
	p, err = Choose(fakeHost(0, LayerUserNS), Needs{Fallback: FallbackWarn})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(p.Warning(), "corral: sandbox disabled: commands run with full host access, without "))
	p, err = Choose(fakeHost(7), Needs{})
	require.NoError(t, err)
	assert.Empty(t, p.Warning())
}

func TestTestHookMarksLayersUnavailable(t *testing.T) {
	defer testhook.Disable(LayerUserNS, LayerLandlock)()
	h := fakeHost(7).WithTestHook()
	assert.False(t, h.Status(LayerUserNS).Available)
	assert.Equal(t, "disabled by a test", h.Status(LayerUserNS).Reason)
	assert.False(t, h.Status(LayerLandlock).Available)
	assert.Zero(t, h.LandlockABI)
	assert.True(t, h.Status(LayerSeccomp).Available)
	assert.True(t, fakeHost(7).Status(LayerUserNS).Available, "the probed host is not changed")
}

// With FallbackFail, Choose refuses with the first missing layer and the
// rung FallbackWarn would have run on.
func TestChooseRefusal(t *testing.T) {
	_, err := Choose(fakeHost(7, LayerProc), Needs{Fallback: FallbackFail})
	var r *Refusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, LayerProc, r.Missing.Name)
	assert.Equal(t, RungLandlock, r.Possible)
	assert.Equal(t, `unavailable: no proc here (Fallback "warn" would run on rung landlock)`, err.Error())

	_, err = Choose(&Host{Seatbelt: true, Layers: []LayerStatus{{Name: LayerSeatbelt, Reason: "gone"}}}, Needs{})
	require.ErrorAs(t, err, &r)
	assert.Equal(t, RungNone, r.Possible)
	assert.Equal(t, `unavailable: gone (set Fallback "warn" to run unsandboxed)`, err.Error())
}
