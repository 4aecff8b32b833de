package corral

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/ladder"
)

// fakeHost has every layer, Landlock at abi, minus the ones named.
func fakeHost(abi int, missing ...Layer) *ladder.Host {
	h := &ladder.Host{LandlockABI: abi}
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

func TestChooseFailsClosed(t *testing.T) {
	cases := []struct {
		name  string
		h     *ladder.Host
		n     ladder.Needs
		layer Layer
		hint  string
	}{
		{"no user namespaces", fakeHost(7, LayerUserNS), ladder.Needs{}, LayerUserNS, "would run on rung landlock"},
		{"no proc", fakeHost(7, LayerProc), ladder.Needs{}, LayerProc, "would run on rung landlock"},
		{"no landlock", fakeHost(0), ladder.Needs{}, LayerLandlock, "would run on rung full"},
		{"no seccomp", fakeHost(7, LayerSeccomp), ladder.Needs{}, LayerSeccomp, "would run on rung full"},
		{"nothing", fakeHost(0, LayerUserNS), ladder.Needs{}, LayerUserNS, "to run unsandboxed"},
		{"no net namespace for none", fakeHost(7, LayerNetNS), ladder.Needs{NetNone: true}, LayerNetNS, "rung landlock"},
		{"abstract sockets", fakeHost(5), ladder.Needs{UnixSockets: true}, LayerLandlock, "rung full"},
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

func TestConfigFallback(t *testing.T) {
	cases := []struct{ in, want Fallback }{{"", FallbackFail}, {FallbackFail, FallbackFail}, {FallbackWarn, FallbackWarn}}
	for _, c := range cases {
		s := &spec{}
		require.NoError(t, s.resolveChoices(Config{Fallback: c.in}))
		assert.Equal(t, c.want, s.needs().Fallback)
	}
	err := (&spec{}).resolveChoices(Config{Fallback: "maybe"})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Fallback", ce.Field)
}
