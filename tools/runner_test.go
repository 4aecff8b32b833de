package tools

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultTimeout, o.DefaultTimeout)
	assert.Equal(t, DefaultMaxTimeout, o.MaxTimeout)
	assert.Equal(t, DefaultMaxOutputBytes, o.MaxOutputBytes)

	o, err = Options{DefaultTimeout: time.Hour}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, time.Hour, o.MaxTimeout, "MaxTimeout is never below DefaultTimeout")
}

func TestOptionsInvalid(t *testing.T) {
	for name, o := range map[string]Options{
		"negative timeout":   {DefaultTimeout: -time.Second},
		"max below default":  {DefaultTimeout: time.Minute, MaxTimeout: time.Second},
		"negative output":    {MaxOutputBytes: -1},
		"relative tools bin": {ToolsBin: "tools/bin"},
	} {
		_, err := o.withDefaults()
		assert.Error(t, err, name)
	}
}

func TestTimeoutArgument(t *testing.T) {
	r := &runner{opts: Options{DefaultTimeout: time.Minute, MaxTimeout: 10 * time.Minute}}
	tests := []struct {
		seconds int
		want    time.Duration
		wantErr bool
	}{
		{0, time.Minute, false},
		{1, time.Second, false},
		{600, 10 * time.Minute, false},
		{601, 0, true},
		{-1, 0, true},
		{1 << 62, 0, true},
	}
	for _, tt := range tests {
		got, err := r.timeout(tt.seconds)
		if tt.wantErr {
			var ae *ArgError
			require.ErrorAs(t, err, &ae, "%d", tt.seconds)
			assert.Equal(t, "timeout_seconds", ae.Field)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
}

func TestEnvironPath(t *testing.T) {
	tests := []struct {
		name     string
		toolsBin string
		base     []string
		extra    []string
		want     []string
	}{
		{"no tools bin", "", []string{"PATH=/usr/bin", "HOME=/h"}, nil, []string{"PATH=/usr/bin", "HOME=/h"}},
		{"prepended", "/i/tools/bin", []string{"PATH=/usr/bin", "HOME=/h"}, nil, []string{"PATH=/i/tools/bin:/usr/bin", "HOME=/h"}},
		{"no PATH", "/i/tools/bin", []string{"HOME=/h"}, nil, []string{"HOME=/h", "PATH=/i/tools/bin:" + defaultPath}},
		{"call sets PATH", "/i/tools/bin", []string{"PATH=/usr/bin"}, []string{"PATH=/opt/bin"}, []string{"PATH=/i/tools/bin:/opt/bin"}},
		{"call adds a variable", "", []string{"A=1"}, []string{"B=2", "A=3"}, []string{"A=3", "B=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &runner{opts: Options{ToolsBin: tt.toolsBin}}
			base := append([]string(nil), tt.base...)
			assert.Equal(t, tt.want, r.environ(base, tt.extra))
			assert.Equal(t, tt.base, base, "the sandbox's environment is not modified")
		})
	}
}

func TestWithToolsBin(t *testing.T) {
	orig := corral.Config{ReadOnlyPaths: []string{"/data"}}
	cfg := WithToolsBin(orig, "/i/tools/bin")
	assert.Equal(t, []string{"/data", "/i/tools/bin"}, cfg.ReadOnlyPaths)
	assert.Equal(t, []string{"/data"}, orig.ReadOnlyPaths)
	assert.Equal(t, cfg.ReadOnlyPaths, WithToolsBin(cfg, "/i/tools/bin").ReadOnlyPaths, "added once")
	assert.Equal(t, "/i/tools/bin", ToolsBinDir("/i"))
}

func TestNewRunnerRefusesNil(t *testing.T) {
	_, err := NewShell(nil, Options{})
	assert.EqualError(t, err, "tools: nil *corral.Sandbox")
	_, err = NewExec(nil, Options{})
	assert.Error(t, err)
}
