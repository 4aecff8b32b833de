package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDangerousEnvRefused(t *testing.T) {
	names := []string{
		"LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
		"PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS", "RUBYOPT", "PERL5OPT", "PERL5LIB",
		"BASH_ENV", "ENV", "ld_preload", "Node_Options",
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			assert.True(t, IsDangerousEnv(name))
			_, err := checkEnvVars([]EnvVar{{Key: "OK", Value: "1"}, {Key: name, Value: "/workspace/evil.so"}})
			require.ErrorIs(t, err, ErrDangerousEnv)
			var ee *EnvError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, name, ee.Name)
			assert.Contains(t, err.Error(), "env "+name+": refused")
		})
	}
}

func TestEnvAllowed(t *testing.T) {
	// The old tool refused to name secret variables; with the sandbox
	// deciding what a command can reach, naming one is harmless.
	vars := []EnvVar{
		{Key: "PATH", Value: "/opt/bin:/usr/bin"},
		{Key: "ANTHROPIC_API_KEY", Value: "x"},
		{Key: "LD_PRELOADX", Value: "x"},
		{Key: "MY_ENV", Value: ""},
		{Key: "GREETING", Value: "a=b"},
	}
	env, err := checkEnvVars(vars)
	require.NoError(t, err)
	assert.Equal(t, []string{"PATH=/opt/bin:/usr/bin", "ANTHROPIC_API_KEY=x", "LD_PRELOADX=x", "MY_ENV=", "GREETING=a=b"}, env)
}

func TestEnvMalformed(t *testing.T) {
	for _, v := range []EnvVar{{Key: ""}, {Key: "A=B"}, {Key: "A\x00"}, {Key: "A", Value: "x\x00y"}} {
		_, err := checkEnvVars([]EnvVar{v})
		var ae *ArgError
		require.ErrorAs(t, err, &ae, "%q", v.Key)
		assert.Equal(t, "env", ae.Field)
	}
}
