package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCgroupfs lays out a directory like a cgroup v2 hierarchy whose
// cgroup self has the given controllers and subtree_control.
func fakeCgroupfs(t *testing.T, self, controllers, subtree string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, self)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, v := range map[string]string{
		"cgroup.controllers": controllers + "\n", "cgroup.subtree_control": subtree + "\n", "cgroup.procs": "1\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644))
	}
	return root
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func TestFindHierarchy(t *testing.T) {
	for _, tc := range []struct {
		name, controllers, subtree, err, wrote string
	}{
		{"enabled", "cpuset cpu io memory pids", "cpu memory pids", "", "cpu memory pids"},
		{"enables the missing", "cpu io memory pids", "memory", "", "+cpu +pids"},
		{"no controllers (cgroup v1 host)", "hugetlb", "", "has no cpu, memory, pids controller", ""},
		{"no pids", "cpu memory", "", "has no pids controller", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeCgroupfs(t, "user.slice/corral", tc.controllers, tc.subtree)
			h, err := FindHierarchy(root, "/user.slice/corral")
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(root, "user.slice/corral"), h.Dir)
			assert.Equal(t, tc.wrote, read(t, filepath.Join(h.Dir, "cgroup.subtree_control")))
		})
	}
	_, err := FindHierarchy(t.TempDir(), "/")
	assert.ErrorContains(t, err, "no cgroup v2 hierarchy")
}

func TestFindHierarchyNotDelegated(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes a read-only file anyway")
	}
	root := fakeCgroupfs(t, "user.slice", "cpu memory pids", "")
	require.NoError(t, os.Chmod(filepath.Join(root, "user.slice", "cgroup.subtree_control"), 0o444))
	_, err := FindHierarchy(root, "/user.slice")
	assert.ErrorContains(t, err, "not delegated")
}

func TestCgroupWritesLimits(t *testing.T) {
	root := fakeCgroupfs(t, "", "cpu memory pids", "cpu memory pids")
	h, err := FindHierarchy(root, "/")
	require.NoError(t, err)
	c, err := h.New("corral-1234", Set{Memory: 256 << 20, Pids: 512, CPUs: 1.5, FileSize: 1 << 20})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "corral-1234"), c.Dir)
	assert.Equal(t, "268435456", read(t, filepath.Join(c.Dir, "memory.max")))
	assert.Equal(t, "0", read(t, filepath.Join(c.Dir, "memory.swap.max")))
	assert.Equal(t, "512", read(t, filepath.Join(c.Dir, "pids.max")))
	assert.Equal(t, "150000 100000", read(t, filepath.Join(c.Dir, "cpu.max")))
	require.NoError(t, c.Add(4321))
	assert.Equal(t, "4321", read(t, filepath.Join(c.Dir, "cgroup.procs")))

	assert.Empty(t, c.Hits())
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "pids.events"), []byte("max 3\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "memory.events"), []byte("low 0\nhigh 0\nmax 0\noom 1\noom_kill 1\n"), 0o644))
	assert.Equal(t, []Name{Memory, Pids}, c.Hits())

	_, err = h.New("corral-1234", Set{})
	assert.Error(t, err, "a cgroup is made once")
	for _, bad := range []string{"", ".", "..", "a/b"} {
		_, err = h.New(bad, Set{})
		assert.Error(t, err, bad)
	}
}

func TestCgroupOnlyWhatIsAsked(t *testing.T) {
	root := fakeCgroupfs(t, "", "cpu memory pids", "cpu memory pids")
	h, err := FindHierarchy(root, "/")
	require.NoError(t, err)
	c, err := h.New("sb", Set{Pids: 64})
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(c.Dir, "memory.max"))
	assert.NoFileExists(t, filepath.Join(c.Dir, "cpu.max"))
	assert.Equal(t, "64", read(t, filepath.Join(c.Dir, "pids.max")))
	// CPUs below the kernel's smallest quota ask for that one.
	c2, err := h.New("sb2", Set{CPUs: 0.001})
	require.NoError(t, err)
	assert.Equal(t, "1000 100000", read(t, filepath.Join(c2.Dir, "cpu.max")))
}

func TestSelfPathAndMountPoint(t *testing.T) {
	p, ok := SelfPath(strings.NewReader("12:pids:/\n1:name=systemd:/x\n0::/user.slice/user-1000.slice/session-2.scope\n"))
	assert.True(t, ok)
	assert.Equal(t, "/user.slice/user-1000.slice/session-2.scope", p)
	_, ok = SelfPath(strings.NewReader("8:pids:/\n"))
	assert.False(t, ok, "a cgroup v1 only process")

	mi := "25 30 0:23 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n" +
		"33 30 0:31 / /sys/fs/cgroup/un\\040ified rw,relatime shared:17 - cgroup2 cgroup2 rw\n"
	m, ok := MountPoint(strings.NewReader(mi))
	assert.True(t, ok)
	assert.Equal(t, "/sys/fs/cgroup/un ified", m)
	_, ok = MountPoint(strings.NewReader("25 30 0:23 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"))
	assert.False(t, ok)
}
