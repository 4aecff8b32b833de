package limits

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cpuPeriod is cpu.max's period in microseconds, the kernel's default.
const cpuPeriod = 100_000

// Hierarchy is a cgroup v2 directory the caller may create the cgroups of
// its sandboxes in: its controllers include memory, pids and cpu, and its
// subtree_control passes them on.
type Hierarchy struct {
	Dir string
}

// controllers are the ones a sandbox's cgroup uses.
var controllers = []string{"cpu", "memory", "pids"}

// Controlled lists the limits a cgroup enforces.
func Controlled() []Name { return []Name{Memory, Pids, CPUs} }

// FindHierarchy returns the directory under root (where cgroup2 is
// mounted) of the calling process's cgroup, self as /proc/self/cgroup names
// it, if sandboxes' cgroups can be made there: it has the controllers, and
// passes them on or can be made to. The error says why not, in a sentence.
//
// The kernel lets a cgroup pass controllers on only while it holds no
// process itself: that holds for the root cgroup and for a subtree
// delegated empty (systemd's Delegate=yes, with the caller in a leaf below
// it is not enough: the caller's own cgroup must be the delegated one and
// hold nothing but the sandboxes).
func FindHierarchy(root, self string) (*Hierarchy, error) {
	dir := filepath.Join(root, filepath.Clean("/"+self))
	have, err := readWords(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("no cgroup v2 hierarchy at %s", root)
	}
	var missing []string
	for _, c := range controllers {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cgroup %s has no %s controller (the host keeps it elsewhere, e.g. on cgroup v1)", dir, strings.Join(missing, ", "))
	}
	if !writable(dir) {
		return nil, fmt.Errorf("cgroup %s is not delegated to this user", dir)
	}
	if err := enable(dir); err != nil {
		return nil, err
	}
	return &Hierarchy{Dir: dir}, nil
}

// enable has dir pass the controllers on to the cgroups made in it.
func enable(dir string) error {
	on, err := readWords(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroup %s: %v", dir, err)
	}
	var add []string
	for _, c := range controllers {
		if !slices.Contains(on, c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	err = writeFile(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(add, " "))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cgroup %s is not delegated to this user", dir)
	}
	return fmt.Errorf("cgroup %s cannot pass on its controllers (it holds processes itself?): %v", dir, err)
}

// Cgroup is one sandbox's cgroup.
type Cgroup struct {
	Dir string
}

// New makes the cgroup name in h with the limits of s that a cgroup
// enforces. Memory's limit includes swap: memory.swap.max is 0, so a
// runaway does not move to swap instead.
func (h *Hierarchy) New(name string, s Set) (*Cgroup, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup name %q", name)
	}
	c := &Cgroup{Dir: filepath.Join(h.Dir, name)}
	if err := os.Mkdir(c.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := c.set(s); err != nil {
		c.Remove()
		return nil, err
	}
	return c, nil
}

func (c *Cgroup) set(s Set) error {
	var files [][2]string
	if s.Memory > 0 {
		files = append(files, [2]string{"memory.max", strconv.FormatInt(s.Memory, 10)}, [2]string{"memory.swap.max", "0"})
	}
	if s.Pids > 0 {
		files = append(files, [2]string{"pids.max", strconv.FormatInt(s.Pids, 10)})
	}
	if s.CPUs > 0 {
		quota := max(int64(s.CPUs*cpuPeriod), 1000) // the kernel's smallest quota is 1ms
		files = append(files, [2]string{"cpu.max", fmt.Sprintf("%d %d", quota, cpuPeriod)})
	}
	for _, f := range files {
		err := writeFile(filepath.Join(c.Dir, f[0]), f[1])
		if err != nil && !(f[0] == "memory.swap.max" && errors.Is(err, fs.ErrNotExist)) { // no swap accounting
			return err
		}
	}
	return nil
}

// Add moves the process pid, and so every process it starts later, into c.
func (c *Cgroup) Add(pid int) error {
	return writeFile(filepath.Join(c.Dir, "cgroup.procs"), strconv.Itoa(pid))
}

// Hits lists the limits c counted as reached: memory.events' max or
// oom_kill, pids.events' max.
func (c *Cgroup) Hits() []Name {
	var out []Name
	if ev := readEvents(filepath.Join(c.Dir, "memory.events")); ev["max"] > 0 || ev["oom_kill"] > 0 {
		out = append(out, Memory)
	}
	if ev := readEvents(filepath.Join(c.Dir, "pids.events")); ev["max"] > 0 {
		out = append(out, Pids)
	}
	return out
}

// Remove removes c, which must hold no process any more.
func (c *Cgroup) Remove() error { return os.Remove(c.Dir) }

// SelfPath reads the calling process's cgroup v2 path from r, the text of
// /proc/self/cgroup: the line "0::PATH".
func SelfPath(r io.Reader) (string, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return p, true
		}
	}
	return "", false
}

// MountPoint reads where cgroup2 is mounted from r, the text of
// /proc/self/mountinfo.
func MountPoint(r io.Reader) (string, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, fs := strings.Fields(pre), strings.Fields(post)
		if ok && len(fields) >= 5 && len(fs) >= 1 && fs[0] == "cgroup2" {
			return unescape(fields[4]), true
		}
	}
	return "", false
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func readWords(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

func readEvents(path string) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); ok && err == nil {
			out[k] = n
		}
	}
	return out
}

// writeFile writes one value to a cgroup interface file. The kernel makes
// a cgroup's files and refuses to create others, so O_CREATE matters only
// to a directory laid out like cgroupfs in tests.
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
