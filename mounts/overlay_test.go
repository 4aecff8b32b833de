package mounts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuildOverlay(t *testing.T) {
	in := Input{
		Writable:  []string{"/home/u/ws", "/home/u/ws/sub", "/var/cache/x"},
		ReadOnly:  []string{"/home/u/ws/vendor", "/home/u/ws"},
		Protected: []string{".git/hooks"},
		Overlays:  []OverlayRoot{{Path: "/home/u/ws", Upper: "/cs/upper", Work: "/cs/work"}},
	}
	got := Build(in).Mounts[4:]
	assert.Equal(t, []Mount{
		{Kind: Bind, Path: "/var/cache/x"},
		{Kind: Overlay, Path: "/home/u/ws", Upper: "/cs/upper", Work: "/cs/work"},
		{Kind: BindReadOnly, Path: "/home/u/ws"}, // read-only still wins at equal depth
		{Kind: Pin, Path: "/var/cache/x/.git"},
		{Kind: BindReadOnly, Path: "/home/u/ws/vendor"},
		{Kind: Protect, Path: "/home/u/ws/.git/hooks"},
		{Kind: Protect, Path: "/var/cache/x/.git/hooks"},
		{Kind: Protect, Path: "/home/u/ws/sub/.git/hooks"},
	}, got, "no bind of /home/u/ws/sub: writes there must go through the overlay")
}

func TestBuildWithoutOverlay(t *testing.T) {
	got := Build(Input{Writable: []string{"/ws", "/ws/sub"}}).Mounts[4:]
	assert.Equal(t, []Mount{{Kind: Bind, Path: "/ws"}, {Kind: Bind, Path: "/ws/sub"}}, got)
}

func TestOverlayMountString(t *testing.T) {
	m := Mount{Kind: Overlay, Path: "/ws", Upper: "/cs/upper", Work: "/cs/work"}
	assert.Equal(t, "overlay  /ws (changes in /cs/upper)", m.String())
}
