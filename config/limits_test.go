package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

func TestParseLimits(t *testing.T) {
	doc := `[[agents]]
id = "a"
[agents.sandbox.limits]
memory = "2G"
pids = 512
cpus = 1.5
tmp_size = "none"
file_size = "1G"
open_files = "1024"
cpu_time = "10m"

[[agents]]
id = "b"
[agents.sandbox]
limits = { cpus = 2 }
`
	cfg, err := Parse(strings.NewReader(doc), "/etc/corral/agents.toml")
	require.NoError(t, err)
	want := corral.Limits{Memory: 2 << 30, Pids: 512, CPUs: 1.5, TmpSize: corral.NoLimit, FileSize: 1 << 30,
		OpenFiles: 1024, CPUTime: 10 * time.Minute}
	assert.Equal(t, want, cfg.Agents[0].Sandbox.Limits)
	assert.Equal(t, want, cfg.Agents[0].Sandbox.CorralConfig().Limits)
	assert.Equal(t, corral.Limits{CPUs: 2}, cfg.Agents[1].Sandbox.Limits)
}

func TestParseLimitsErrors(t *testing.T) {
	head := "[[agents]]\nid = \"a\"\n"
	for _, tc := range []struct{ body, want string }{
		{"[agents.sandbox.limits]\ncpus = \"fast\"\n", `4: agents[0].sandbox.limits.cpus: "fast": want a number of CPUs more than zero such as 1.5, or none`},
		{"[agents.sandbox.limits]\npids = true\n", `4: agents[0].sandbox.limits.pids: want an integer or a string, not a boolean`},
		{"[agents.sandbox.limits]\ncpu_time = 30\n", `4: agents[0].sandbox.limits.cpu_time: want a string, not an integer`},
		{"[agents.sandbox]\nlimits = \"low\"\n", `4: agents[0].sandbox.limits: want a table, not a string`},
	} {
		_, err := Parse(strings.NewReader(head+tc.body), "/etc/corral/agents.toml")
		require.Error(t, err, tc.body)
		assert.Equal(t, "/etc/corral/agents.toml:"+tc.want, err.Error())
	}
}
