package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostPortsAndPublish(t *testing.T) {
	cfg, err := parseDoc(t, `[defaults.sandbox]
network = "none"
host_ports = [11434]
[[agents]]
id = "a"
[agents.sandbox]
host_ports = ["5432/tcp"]
publish = ["3000", "127.0.0.1:8080:80"]
`)
	require.NoError(t, err)
	s := cfg.Agents[0].Sandbox
	assert.Equal(t, []int{11434, 5432}, s.HostPorts, "the defaults' ports, then the agent's")
	assert.Equal(t, []string{"3000", "127.0.0.1:8080:80"}, s.Publish)
	c := s.CorralConfig()
	assert.Equal(t, []int{11434, 5432}, c.HostPorts)
	assert.Equal(t, []string{"3000", "127.0.0.1:8080:80"}, c.Publish)

	for doc, want := range map[string]string{
		`host_ports = [11434]`:                           `agents[0].sandbox.host_ports[0]: needs network = "none" or "allow"`,
		"network = \"none\"\nhost_ports = [\"53/udp\"]":  `agents[0].sandbox.host_ports[0]: "53/udp": UDP is not forwarded: host ports carry TCP only`,
		"network = \"none\"\nhost_ports = [0]":           `agents[0].sandbox.host_ports[0]: "0": want a port from 1 to 65535`,
		"network = \"none\"\npublish = [\"0.0.0.0:80\"]": `agents[0].sandbox.publish[0]: "0.0.0.0:80": host address 0.0.0.0 is not loopback`,
		"network = \"none\"\npublish = [\"x:80\"]":       `agents[0].sandbox.publish[0]: "x:80": host port "x"`,
	} {
		_, err := parseDoc(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\n"+doc+"\n")
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), want, doc)
	}
	cfg, err = parseDoc(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"allow\"\npublish_any = true\npublish = [\"0.0.0.0:80:8080\"]\n")
	require.NoError(t, err)
	assert.True(t, cfg.Agents[0].Sandbox.CorralConfig().PublishAny)
}
