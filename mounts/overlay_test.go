package mounts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuildOverlay(t *testing.T) {
	in := Input{
		Writable:  []string{"/home/u/ws", "/home/u/ws/sub", "/var/cache/x"},
		ReadOnly:  []string{"/home/u/ws/vendor", "/home/u/ws"},
		Protected: []string{".git"},
		Overlays:  []OverlayRoot{{Path: "/home/u/ws", Upper: "/cs/upper", Work: "/cs/work"}},
	}
	got := Build(in).Mounts[4:]
	assert.Equal(t, []Mount{
		{Kind: Bind, Path: "/var/cache/x"},
		{Kind: Overlay, Path: "/home/u/ws", Upper: "/cs/upper", Work: "/cs/work"},
		{Kind: BindReadOnly, Path: "/home/u/ws"}, // read-only still wins at equal depth
		{Kind: BindReadOnly, Path: "/home/u/ws/vendor"},
	}, got, "no bind of /home/u/ws/sub: writes there must go through the overlay")
}

// TestBuildOverlays mounts a changeset's roots beyond the workspace: each
// overlaid root is an overlay, and a writable path inside any of them gets
// no bind, while one outside them all is bound as usual.
func TestBuildOverlays(t *testing.T) {
	in := Input{
		Writable: []string{"/home/u/ws", "/srv/data", "/srv/data/inner", "/var/cache/x"},
		Overlays: []OverlayRoot{
			{Path: "/home/u/ws", Upper: "/cs/roots/0/upper", Work: "/cs/roots/0/work"},
			{Path: "/srv/data", Upper: "/cs/roots/1/upper", Work: "/cs/roots/1/work"},
		},
	}
	assert.Equal(t, []Mount{
		{Kind: Overlay, Path: "/srv/data", Upper: "/cs/roots/1/upper", Work: "/cs/roots/1/work"},
		{Kind: Bind, Path: "/var/cache/x"},
		{Kind: Overlay, Path: "/home/u/ws", Upper: "/cs/roots/0/upper", Work: "/cs/roots/0/work"},
	}, Build(in).Mounts[4:])
}

func TestBuildWithoutOverlay(t *testing.T) {
	got := Build(Input{Writable: []string{"/ws", "/ws/sub"}}).Mounts[4:]
	assert.Equal(t, []Mount{{Kind: Bind, Path: "/ws"}, {Kind: Bind, Path: "/ws/sub"}}, got)
}

func TestOverlayMountString(t *testing.T) {
	m := Mount{Kind: Overlay, Path: "/ws", Upper: "/cs/upper", Work: "/cs/work"}
	assert.Equal(t, "overlay  /ws (changes in /cs/upper)", m.String())
}
