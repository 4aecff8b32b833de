package corral

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/seccomp"
)

func TestJailOptionsOfNetworkAllow(t *testing.T) {
	s, err := Config{Workspace: t.TempDir(), Network: NetworkAllow}.resolve()
	require.NoError(t, err)

	o, err := jailOptions(s, &ladder.Plan{Rung: RungFull, Landlock: true, ABI: 7, Seccomp: true}, nil)
	require.NoError(t, err)
	assert.True(t, o.NetProxy, "a network namespace with the proxy's listeners")
	assert.False(t, o.NetNone)
	assert.False(t, o.Landlock.DenyTCP, "the namespace holds TCP in; the command may serve on its loopback")

	o, err = jailOptions(s, &ladder.Plan{Rung: RungLandlock, Landlock: true, ABI: 7, Scope: true, Seccomp: true},
		&hostProxy{ports: [2]int{4001, 4002}})
	require.NoError(t, err)
	assert.False(t, o.NetProxy)
	assert.True(t, o.Landlock.DenyTCP)
	assert.Empty(t, o.Landlock.ConnectTCP, "no connect of the command's own")
	assert.Equal(t, []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:4001"), netip.MustParseAddrPort("127.0.0.1:4002")},
		o.ConnectOnly, "the init connects to the proxy's addresses")
	want, err := seccomp.Filter(seccomp.Options{TCPOnly: true})
	require.NoError(t, err)
	assert.Equal(t, want, o.Seccomp, "UDP and raw sockets refused")

	// Without seccomp there is no listener to make the connections:
	// Landlock allows the proxy's ports, on any address.
	o, err = jailOptions(s, &ladder.Plan{Rung: RungLandlock, Landlock: true, ABI: 7, Scope: true},
		&hostProxy{ports: [2]int{4001, 4002}})
	require.NoError(t, err)
	assert.Equal(t, []uint16{4001, 4002}, o.Landlock.ConnectTCP)
	assert.Empty(t, o.ConnectOnly)
}
