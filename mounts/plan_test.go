package mounts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func paths(p *Plan) []string {
	var out []string
	for _, m := range p.Mounts {
		out = append(out, m.String())
	}
	return out
}

func TestBuildBase(t *testing.T) {
	p := Build(Input{Writable: []string{"/home/u/ws"}})
	assert.Equal(t, []string{
		"ro-root  /",
		"proc     /proc",
		"dev      /dev",
		"tmpfs    /tmp",
		"bind     /home/u/ws",
	}, paths(p))
}

func TestBuildOrdersByDepthSoTheMostSpecificWins(t *testing.T) {
	p := Build(Input{
		Writable: []string{"/srv/inst/agents/a/workspace", "/srv/inst/agents/a/data/out"},
		ReadOnly: []string{"/srv/inst/agents/a/data", "/srv/inst"},
		Hidden:   []string{"/srv/inst/agents/a/workspace/.env"},
	})
	assert.Equal(t, []string{
		"ro-root  /",
		"proc     /proc",
		"dev      /dev",
		"tmpfs    /tmp",
		"ro-bind  /srv/inst",
		"bind     /srv/inst/agents/a/workspace",
		"ro-bind  /srv/inst/agents/a/data",
		"bind     /srv/inst/agents/a/data/out",
		"hide     /srv/inst/agents/a/workspace/.env",
	}, paths(p))
}

func TestBuildStricterKindWinsAtEqualPath(t *testing.T) {
	p := Build(Input{Writable: []string{"/a/b"}, ReadOnly: []string{"/a/b"}})
	assert.Equal(t, []string{"bind     /a/b", "ro-bind  /a/b"}, paths(p)[4:])
}

func TestBuildPinsTheDirectoriesAboveReadOnlyAndHiddenPaths(t *testing.T) {
	p := Build(Input{
		Writable: []string{"/w"},
		ReadOnly: []string{"/w/a/b/data", "/w/top", "/elsewhere/x"},
		Hidden:   []string{"/w/c/secret"},
	})
	assert.Equal(t, []string{
		"bind     /w",
		"pin      /w/a",
		"pin      /w/c",
		"ro-bind  /w/top",
		"ro-bind  /elsewhere/x",
		"pin      /w/a/b",
		"hide     /w/c/secret",
		"ro-bind  /w/a/b/data",
	}, paths(p)[4:], "a direct child is a mount point already and needs no pin; nothing outside writable roots")
}

func TestAbove(t *testing.T) {
	assert.Empty(t, above("/w/x", "/w"))
	assert.Empty(t, above("/w", "/w"))
	assert.Empty(t, above("/v/x/y", "/w"))
	assert.Equal(t, []string{"/w/a/b", "/w/a"}, above("/w/a/b/c", "/w"))
	assert.Equal(t, []string{"/a"}, above("/a/b", "/"))
}

func TestBuildUnderPrivateTmp(t *testing.T) {
	p := Build(Input{
		Writable: []string{"/tmp/ws"},
		ReadOnly: []string{"/tmp/ws/data", "/tmp/ro"},
		Hidden:   []string{"/tmp/ws/secret", "/tmp/gone", "/dev/shm/x"},
	})
	assert.Equal(t, []string{
		"bind     /tmp/ws (mount point created)",
		"ro-bind  /tmp/ro (mount point created)",
		"ro-bind  /tmp/ws/data",
		"hide     /tmp/ws/secret",
	}, paths(p)[4:], "hidden paths under the private /tmp and /dev are already invisible")
}

func TestBuildDedupes(t *testing.T) {
	p := Build(Input{Writable: []string{"/w", "/w"}, ReadOnly: []string{"/r", "/r"}})
	assert.Len(t, p.Mounts, 6)
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "hide", Hide.String())
	assert.Equal(t, "Kind(42)", Kind(42).String())
}

func TestBuildLeavesProtectedNamesToTheCommandStart(t *testing.T) {
	p := Build(Input{Writable: []string{"/w"}, Protected: []string{".git", ".bashrc"}})
	for _, m := range p.Mounts {
		assert.NotContains(t, m.Path, "/w/.", "guarded when the command starts, not planned")
	}
}

func TestBuildTmpSize(t *testing.T) {
	p := Build(Input{Writable: []string{"/w"}, TmpSize: 64 << 20})
	sizes := map[string]int64{}
	for _, m := range p.Mounts {
		sizes[m.Path] = m.Size
	}
	assert.Equal(t, int64(64<<20), sizes["/tmp"])
	assert.Equal(t, int64(64<<20), sizes["/dev"], "the Dev step sizes /dev/shm")
	assert.Zero(t, sizes["/w"])
	assert.Contains(t, p.String(), "tmpfs    /tmp (size 64MiB)")
	assert.Contains(t, p.String(), "/dev (/dev/shm size 64MiB)")
	for _, m := range Build(Input{Writable: []string{"/w"}}).Mounts {
		assert.Zero(t, m.Size, m.Path)
	}
}

func TestBuildDestinations(t *testing.T) {
	p := Build(Input{
		Writable: []string{"/workspace", "/home/u/proj"},
		ReadOnly: []string{"/agent", "/tmp/in"},
		Hidden:   []string{"/home/u/.ssh"},
		Sources:  map[string]string{"/workspace": "/state/s1/ws", "/agent": "/home/u/agent", "/tmp/in": "/srv/in"},
	})
	assert.Equal(t, []string{
		"ro-root  /",
		"proc     /proc",
		"dev      /dev",
		"tmpfs    /tmp",
		"mountpt  /workspace",
		"mountpt  /agent",
		"bind     /workspace (from /state/s1/ws)",
		"ro-bind  /agent (from /home/u/agent)",
		"ro-bind  /tmp/in (from /srv/in) (mount point created)",
		"bind     /home/u/proj",
		"hide     /home/u/.ssh",
	}, paths(p))
}

// A destination can be an overlay too: its writes go to a changeset, the
// host's directory below it is the source.
func TestBuildOverlayDestination(t *testing.T) {
	p := Build(Input{
		Writable: []string{"/w", "/data"},
		Hidden:   []string{"/srv/data"},
		Overlays: []OverlayRoot{{Path: "/w", Upper: "/cs/0/upper", Work: "/cs/0/work"}, {Path: "/data", Upper: "/cs/1/upper", Work: "/cs/1/work"}},
		Sources:  map[string]string{"/data": "/srv/data"},
	})
	assert.Equal(t, []string{
		"ro-root  /",
		"proc     /proc",
		"dev      /dev",
		"tmpfs    /tmp",
		"mountpt  /data",
		"overlay  /w (changes in /cs/0/upper)",
		"overlay  /data (changes in /cs/1/upper) (from /srv/data)",
		"hide     /srv/data",
	}, paths(p))
}

func TestBuildLayeredHomeAndPersistentTmp(t *testing.T) {
	p := Build(Input{
		Writable: []string{"/home/u/ws"},
		Hidden:   []string{"/home/u/.config/gcloud", "/state"},
		Layered:  []OverlayRoot{{Path: "/home/u", Upper: "/state/s/up", Work: "/state/s/wk"}},
		Tmp:      "/state/s/tmp",
	})
	assert.Equal(t, []string{
		"ro-root  /",
		"proc     /proc",
		"dev      /dev",
		"bind     /tmp (from /state/s/tmp)",
		"hide     /state",
		"overlay  /home/u (changes in /state/s/up)",
		"bind     /home/u/ws",
		"pin      /home/u/.config",
		"hide     /home/u/.config/gcloud",
	}, paths(p))
}
