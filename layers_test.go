package corral

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/testhook"
)

// fakeHost has every layer, Landlock at abi, minus the ones named.
func fakeHost(abi int, missing ...Layer) *host {
	h := &host{landlockABI: abi}
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
		h.layers = append(h.layers, l)
	}
	return h
}

func TestChooseRung(t *testing.T) {
	warn := needs{fallback: FallbackWarn}
	cases := []struct {
		name     string
		h        *host
		n        needs
		rung     Rung
		landlock bool
		scope    bool
		seccomp  bool
		without  []Layer
	}{
		{"everything", fakeHost(7), needs{fallback: FallbackFail}, RungFull, true, true, true, nil},
		{"old landlock is enough for full", fakeHost(3), needs{fallback: FallbackFail}, RungFull, true, false, true, nil},
		{"no user namespaces", fakeHost(7, LayerUserNS), warn, RungLandlock, true, true, true, []Layer{LayerUserNS}},
		{"no fresh proc", fakeHost(7, LayerProc), warn, RungLandlock, true, true, true, []Layer{LayerProc}},
		{"no net namespace, host network", fakeHost(7, LayerNetNS), needs{fallback: FallbackFail}, RungFull, true, true, true, nil},
		{"no net namespace, no network", fakeHost(7, LayerNetNS), needs{netNone: true, fallback: FallbackWarn}, RungLandlock, true, true, true, []Layer{LayerNetNS}},
		{"no landlock, namespaces", fakeHost(0), warn, RungFull, false, false, true, []Layer{LayerLandlock}},
		{"no seccomp", fakeHost(7, LayerSeccomp), warn, RungFull, true, true, false, []Layer{LayerSeccomp}},
		{"landlock without scoping cannot stand alone", fakeHost(5, LayerUserNS), warn, RungNone, false, false, false, []Layer{LayerUserNS}},
		{"nothing", fakeHost(0, LayerUserNS, LayerSeccomp), warn, RungNone, false, false, false, []Layer{LayerUserNS, LayerLandlock, LayerSeccomp}},
		{"unix sockets on the host network want scoping", fakeHost(5), needs{unixSockets: true, fallback: FallbackWarn}, RungFull, true, false, true, []Layer{LayerLandlock}},
		{"unix sockets without network do not", fakeHost(5), needs{unixSockets: true, netNone: true, fallback: FallbackFail}, RungFull, true, false, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := choose(c.h, c.n)
			require.NoError(t, err)
			assert.Equal(t, c.rung, p.rung)
			assert.Equal(t, c.landlock, p.landlock, "landlock")
			assert.Equal(t, c.scope, p.scope, "scope")
			assert.Equal(t, c.seccomp, p.seccomp, "seccomp")
			var without []Layer
			for _, l := range p.without {
				without = append(without, l.Name)
			}
			assert.Equal(t, c.without, without)
			if p.landlock {
				assert.Equal(t, c.h.landlockABI, p.abi)
			}
		})
	}
}

func TestChooseFailsClosed(t *testing.T) {
	cases := []struct {
		name  string
		h     *host
		n     needs
		layer Layer
		hint  string
	}{
		{"no user namespaces", fakeHost(7, LayerUserNS), needs{}, LayerUserNS, "would run on rung landlock"},
		{"no proc", fakeHost(7, LayerProc), needs{}, LayerProc, "would run on rung landlock"},
		{"no landlock", fakeHost(0), needs{}, LayerLandlock, "would run on rung full"},
		{"no seccomp", fakeHost(7, LayerSeccomp), needs{}, LayerSeccomp, "would run on rung full"},
		{"nothing", fakeHost(0, LayerUserNS), needs{}, LayerUserNS, "to run unsandboxed"},
		{"no net namespace for none", fakeHost(7, LayerNetNS), needs{netNone: true}, LayerNetNS, "rung landlock"},
		{"abstract sockets", fakeHost(5), needs{unixSockets: true}, LayerLandlock, "rung full"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := choose(c.h, c.n)
			var se *SetupError
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, c.layer, se.Layer)
			assert.Contains(t, err.Error(), c.hint)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestRungWarning(t *testing.T) {
	p, err := choose(fakeHost(7, LayerUserNS), needs{fallback: FallbackWarn})
	require.NoError(t, err)
	assert.Equal(t, "corral: sandbox runs on rung landlock, without user namespace (no user namespace here)", p.warning())
	p, err = choose(fakeHost(0, LayerUserNS), needs{fallback: FallbackWarn})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(p.warning(), "corral: sandbox disabled: commands run with full host access, without "))
	p, err = choose(fakeHost(7), needs{})
	require.NoError(t, err)
	assert.Empty(t, p.warning())
}

func TestConfigFallback(t *testing.T) {
	cases := []struct{ in, want Fallback }{{"", FallbackFail}, {FallbackFail, FallbackFail}, {FallbackWarn, FallbackWarn}}
	for _, c := range cases {
		s := &spec{}
		require.NoError(t, s.resolveChoices(Config{Fallback: c.in}))
		assert.Equal(t, c.want, s.needs().fallback)
	}
	err := (&spec{}).resolveChoices(Config{Fallback: "maybe"})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Fallback", ce.Field)
}

func TestTestHookMarksLayersUnavailable(t *testing.T) {
	defer testhook.Disable(LayerUserNS, LayerLandlock)()
	h := fakeHost(7).withTestHook()
	assert.False(t, h.status(LayerUserNS).Available)
	assert.Equal(t, "disabled by a test", h.status(LayerUserNS).Reason)
	assert.False(t, h.status(LayerLandlock).Available)
	assert.Zero(t, h.landlockABI)
	assert.True(t, h.status(LayerSeccomp).Available)
	assert.True(t, fakeHost(7).status(LayerUserNS).Available, "the probed host is not changed")
}
