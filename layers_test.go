package corral

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/testhook"
)

// fakeHost has every layer, Landlock at abi, minus the ones named.
func fakeHost(abi int, missing ...Layer) *host {
	h := &host{landlockABI: abi}
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
		h.layers = append(h.layers, l)
	}
	return h
}

func TestChooseRung(t *testing.T) {
	warn := needs{fallback: FallbackWarn}
	cases := []struct {
		name     string
		h        *host
		n        needs
		rung     Rung
		landlock bool
		scope    bool
		seccomp  bool
		without  []Layer
	}{
		{"everything", fakeHost(7), needs{fallback: FallbackFail}, RungFull, true, true, true, nil},
		{"old landlock is enough for full", fakeHost(3), needs{fallback: FallbackFail}, RungFull, true, false, true, nil},
		{"no user namespaces", fakeHost(7, LayerUserNS), warn, RungLandlock, true, true, true, []Layer{LayerUserNS}},
		{"no fresh proc", fakeHost(7, LayerProc), warn, RungLandlock, true, true, true, []Layer{LayerProc}},
		{"no net namespace, host network", fakeHost(7, LayerNetNS), needs{fallback: FallbackFail}, RungFull, true, true, true, nil},
		{"no net namespace, no network", fakeHost(7, LayerNetNS), needs{netNone: true, fallback: FallbackWarn}, RungLandlock, true, true, true, []Layer{LayerNetNS}},
		{"no landlock, namespaces", fakeHost(0), warn, RungFull, false, false, true, []Layer{LayerLandlock}},
		{"no seccomp", fakeHost(7, LayerSeccomp), warn, RungFull, true, true, false, []Layer{LayerSeccomp}},
		{"landlock without scoping cannot stand alone", fakeHost(5, LayerUserNS), warn, RungNone, false, false, false, []Layer{LayerUserNS}},
		{"nothing", fakeHost(0, LayerUserNS, LayerSeccomp), warn, RungNone, false, false, false, []Layer{LayerUserNS, LayerLandlock, LayerSeccomp}},
		{"unix sockets on the host network want scoping", fakeHost(5), needs{unixSockets: true, fallback: FallbackWarn}, RungFull, true, false, true, []Layer{LayerLandlock}},
		{"unix sockets without network do not", fakeHost(5), needs{unixSockets: true, netNone: true, fallback: FallbackFail}, RungFull, true, false, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := choose(c.h, c.n)
			require.NoError(t, err)
			assert.Equal(t, c.rung, p.rung)
			assert.Equal(t, c.landlock, p.landlock, "landlock")
			assert.Equal(t, c.scope, p.scope, "scope")
			assert.Equal(t, c.seccomp, p.seccomp, "seccomp")
			var without []Layer
			for _, l := range p.without {
				without = append(without, l.Name)
			}
			assert.Equal(t, c.without, without)
			if p.landlock {
				assert.Equal(t, c.h.landlockABI, p.abi)
			}
		})
	}
}

func TestChooseFailsClosed(t *testing.T) {
	cases := []struct {
		name  string
		h     *host
		n     needs
		layer Layer
		hint  string
	}{
		{"no user namespaces", fakeHost(7, LayerUserNS), needs{}, LayerUserNS, "would run on rung landlock"},
		{"no proc", fakeHost(7, LayerProc), needs{}, LayerProc, "would run on rung landlock"},
		{"no landlock", fakeHost(0), needs{}, LayerLandlock, "would run on rung full"},
		{"no seccomp", fakeHost(7, LayerSeccomp), needs{}, LayerSeccomp, "would run on rung full"},
		{"nothing", fakeHost(0, LayerUserNS), needs{}, LayerUserNS, "to run unsandboxed"},
		{"no net namespace for none", fakeHost(7, LayerNetNS), needs{netNone: true}, LayerNetNS, "rung landlock"},
		{"abstract sockets", fakeHost(5), needs{unixSockets: true}, LayerLandlock, "rung full"},
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

func TestRungWarning(t *testing.T) {
	p, err := choose(fakeHost(7, LayerUserNS), needs{fallback: FallbackWarn})
	require.NoError(t, err)
	assert.Equal(t, "corral: sandbox runs on rung landlock, without user namespace (no user namespace here)", p.warning())
	p, err = choose(fakeHost(0, LayerUserNS), needs{fallback: FallbackWarn})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(p.warning(), "corral: sandbox disabled: commands run with full host access, without "))
	p, err = choose(fakeHost(7), needs{})
	require.NoError(t, err)
	assert.Empty(t, p.warning())
}

func TestUserNSReason(t *testing.T) {
	cases := []struct {
		name     string
		errno    syscall.Errno
		values   map[string]string
		filtered bool
		want     string
	}{
		{"debian knob", syscall.EPERM, map[string]string{"kernel.unprivileged_userns_clone": "0"}, false,
			"user namespaces disabled: kernel.unprivileged_userns_clone=0"},
		{"no namespaces allowed", syscall.ENOSPC, map[string]string{"user.max_user_namespaces": "0"}, false,
			"user namespaces disabled: user.max_user_namespaces=0"},
		{"ubuntu apparmor", 0, map[string]string{"kernel.apparmor_restrict_unprivileged_userns": "1", "user.max_user_namespaces": "100"}, false,
			"user namespaces disabled: kernel.apparmor_restrict_unprivileged_userns=1"},
		{"container", syscall.EPERM, map[string]string{"user.max_user_namespaces": "100"}, true,
			"clone(CLONE_NEWUSER) refused: this process runs under a seccomp filter (a container's?)"},
		{"limit", syscall.ENOSPC, nil, false, "user namespace limit reached (user.max_user_namespaces)"},
		{"no kernel support", syscall.EINVAL, nil, false, "kernel built without user namespaces (CONFIG_USER_NS)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, userNSReason(c.errno, "raw", c.values, c.filtered))
		})
	}
}

func TestProcReason(t *testing.T) {
	docker := `22 21 0:20 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
23 22 0:21 / /proc/kcore rw,nosuid - tmpfs tmpfs rw
`
	host := `22 21 0:20 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
24 22 0:22 / /proc/sys/fs/binfmt_misc rw,relatime - autofs systemd-1 rw
`
	assert.Equal(t, "proc mount refused (masked /proc in a container: /proc/kcore is covered)",
		procReason(syscall.EPERM, "raw", strings.NewReader(docker)))
	assert.Equal(t, "proc mount refused: operation not permitted", procReason(syscall.EPERM, "raw", strings.NewReader(host)))
	assert.Equal(t, "raw", procReason(syscall.EINVAL, "raw", strings.NewReader(docker)))
}

func TestConfigFallback(t *testing.T) {
	cases := []struct{ in, want Fallback }{{"", FallbackFail}, {FallbackFail, FallbackFail}, {FallbackWarn, FallbackWarn}}
	for _, c := range cases {
		s := &spec{}
		require.NoError(t, s.resolveChoices(Config{Fallback: c.in}))
		assert.Equal(t, c.want, s.needs().fallback)
	}
	err := (&spec{}).resolveChoices(Config{Fallback: "maybe"})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Fallback", ce.Field)
}

func TestTestHookMarksLayersUnavailable(t *testing.T) {
	defer testhook.Disable(LayerUserNS, LayerLandlock)()
	h := fakeHost(7).withTestHook()
	assert.False(t, h.status(LayerUserNS).Available)
	assert.Equal(t, "disabled by a test", h.status(LayerUserNS).Reason)
	assert.False(t, h.status(LayerLandlock).Available)
	assert.Zero(t, h.landlockABI)
	assert.True(t, h.status(LayerSeccomp).Available)
	assert.True(t, fakeHost(7).status(LayerUserNS).Available, "the probed host is not changed")
}

func TestNamespacesLikely(t *testing.T) {
	all := func(string) bool { return true }
	clean := "22 21 0:20 / /proc rw - proc proc rw\n"
	masked := clean + "23 22 0:21 / /proc/kcore rw - tmpfs tmpfs rw\n"
	open := map[string]string{"user.max_user_namespaces": "1000"}
	cases := []struct {
		name     string
		hasNS    func(string) bool
		values   map[string]string
		filtered bool
		mi       string
		want     bool
	}{
		{"ordinary host", all, open, false, clean, true},
		{"no user namespaces in the kernel", func(ns string) bool { return ns != "user" }, open, false, clean, false},
		{"no cgroup namespaces in the kernel", func(ns string) bool { return ns != "cgroup" }, open, false, clean, false},
		{"switched off", all, map[string]string{"kernel.unprivileged_userns_clone": "0"}, false, clean, false},
		{"apparmor", all, map[string]string{"kernel.apparmor_restrict_unprivileged_userns": "1"}, false, clean, false},
		{"container filter", all, open, true, clean, false},
		{"masked proc", all, open, false, masked, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, namespacesLikely(c.hasNS, c.values, c.filtered, strings.NewReader(c.mi)))
		})
	}
}
