package corral

import (
	"testing"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seatbeltHost is a macOS host whose sandbox-exec works or not.
func seatbeltHost(works bool) *ladder.Host {
	l := LayerStatus{Name: LayerSeatbelt, Available: true, Detail: "/usr/bin/sandbox-exec"}
	if !works {
		l = LayerStatus{Name: LayerSeatbelt, Reason: "/usr/bin/sandbox-exec not found"}
	}
	return &ladder.Host{Seatbelt: true, Layers: []LayerStatus{l}}
}

func TestChooseSeatbelt(t *testing.T) {
	cases := []struct {
		name    string
		h       *ladder.Host
		n       ladder.Needs
		rung    Rung
		without []Layer
		refused string // the error's text, when refused
	}{
		{"works", seatbeltHost(true), ladder.Needs{}, RungSeatbelt, nil, ""},
		{"works without network", seatbeltHost(true), ladder.Needs{NetNone: true, UnixSockets: true}, RungSeatbelt, nil, ""},
		{"missing, fail", seatbeltHost(false), ladder.Needs{Fallback: FallbackFail}, "", nil, `set Fallback "warn" to run unsandboxed`},
		{"missing, warn", seatbeltHost(false), ladder.Needs{Fallback: FallbackWarn}, RungNone, []Layer{LayerSeatbelt}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := choose(c.h, c.n)
			if c.refused != "" {
				var se *SetupError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, LayerSeatbelt, se.Layer)
				assert.Contains(t, err.Error(), "sandbox-exec not found")
				assert.Contains(t, err.Error(), c.refused)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.rung, p.Rung)
			var without []Layer
			for _, l := range p.Without {
				without = append(without, l.Name)
			}
			assert.Equal(t, c.without, without)
			assert.False(t, p.Landlock || p.Seccomp, "no Linux layer on macOS")
		})
	}
}

func TestSeatbeltRungSurvivesTestHook(t *testing.T) {
	assert.True(t, seatbeltHost(true).WithTestHook().Seatbelt)
}

func TestDoctorReportOnMac(t *testing.T) {
	spec := func(cfg Config) *spec {
		s := &spec{}
		require.NoError(t, s.resolveChoices(cfg))
		return s
	}
	r := report(seatbeltHost(true), spec(Config{}))
	assert.True(t, r.OK)
	assert.Equal(t, RungSeatbelt, r.Rung)
	assert.Empty(t, r.Without)
	assert.Equal(t, []LayerStatus{{Name: LayerSeatbelt, Available: true, Detail: "/usr/bin/sandbox-exec"}}, r.Layers)

	r = report(seatbeltHost(false), spec(Config{}))
	assert.False(t, r.OK)
	assert.Empty(t, r.Rung)
	assert.Contains(t, r.Problem, "seatbelt: unavailable: /usr/bin/sandbox-exec not found")

	r = report(seatbeltHost(false), spec(Config{Fallback: FallbackWarn}))
	assert.True(t, r.OK)
	assert.Equal(t, RungNone, r.Rung)
	assert.Equal(t, []string{string(LayerSeatbelt)}, r.Without)
}
