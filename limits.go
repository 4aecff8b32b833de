package corral

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corralhq/corral/limits"
)

// Limits bound what a command may use. A zero field takes its default
// (see [DefaultLimits]); [NoLimit] asks for none. docs/layers.md says
// which mechanism enforces each limit on each rung; asking for one the
// host cannot enforce follows Config.Fallback, like a missing layer, while
// a default the host cannot enforce is left out quietly.
type Limits struct {
	// Memory caps each process's private writable memory (RLIMIT_DATA),
	// in bytes; with cgroup v2, the whole sandbox's memory, tmpfs pages
	// included (memory.max).
	Memory int64
	// Pids caps the sandbox's tasks, processes and threads together.
	Pids int
	// CPUs caps the sandbox's CPU time per period, in CPUs (1.5 is one
	// and a half); cgroup v2 only.
	CPUs float64
	// TmpSize caps the private /tmp and /dev/shm, each, in bytes.
	TmpSize int64
	// FileSize caps the size of any file a process writes, in bytes.
	FileSize int64
	// OpenFiles caps each process's open descriptors.
	OpenFiles int
	// CPUTime caps each process's CPU time, in whole seconds (rounded up).
	CPUTime time.Duration
}

// NoLimit, in a field of Limits, asks for no limit at all.
const NoLimit = -1

// DefaultLimits are the limits of a zero Limits: far above what a real
// build needs, low enough to stop a runaway before it takes the host down.
//
//   - TmpSize 1 GiB: tmpfs pages are memory that no per-process limit
//     counts, and an unsized tmpfs may take half of the host's RAM (twice,
//     with /dev/shm); compilers and test suites keep well under 1 GiB
//     there, and build outputs go to the workspace.
//   - Pids 4096: a parallel build on a large machine runs a few hundred
//     tasks (threads included); a fork bomb reaches 4096 in well under a
//     second and stops there, each process small.
//
// Memory, CPUs, FileSize, OpenFiles and CPUTime have no default: a
// per-process memory or CPU-time cap that never hurts a real build would
// be too high to help, and the caller's own file size and descriptor
// limits already hold.
func DefaultLimits() Limits {
	return Limits{TmpSize: 1 << 30, Pids: 4096}
}

// Limit names one of Limits' fields as the CLI's flag spells it.
type Limit string

// The limits, in the order Doctor lists them.
const (
	LimitMemory    Limit = Limit(limits.Memory)
	LimitPids      Limit = Limit(limits.Pids)
	LimitCPUs      Limit = Limit(limits.CPUs)
	LimitTmpSize   Limit = Limit(limits.TmpSize)
	LimitFileSize  Limit = Limit(limits.FileSize)
	LimitOpenFiles Limit = Limit(limits.OpenFiles)
	LimitCPUTime   Limit = Limit(limits.CPUTime)
)

// LimitStatus says whether the host can enforce one limit, and how.
type LimitStatus struct {
	Name      Limit `json:"name"`
	Available bool  `json:"available"`
	// Mechanism says what enforces it ("RLIMIT_NPROC in the sandbox's
	// user namespace", "cgroup v2 pids.max").
	Mechanism string `json:"mechanism,omitempty"`
	// Reason says why it cannot be enforced.
	Reason string `json:"reason,omitempty"`
	// Value is the limit in force, as the CLI's flag takes it, when one
	// is.
	Value string `json:"value,omitempty"`
}

// limitSpec is Limits after validation: every default filled in.
type limitSpec struct {
	set limits.Set
	// asked are the limits the Config set itself: these, not defaults,
	// follow the fallback ladder.
	asked []limits.Name
}

// resolve validates l and fills in the defaults.
func (l Limits) resolve() (limitSpec, error) {
	d := DefaultLimits()
	var out limitSpec
	ints := []struct {
		name      limits.Name
		field     string
		v, def    int64
		dst       *int64
		bytesUnit bool
	}{
		{limits.Memory, "Limits.Memory", l.Memory, d.Memory, &out.set.Memory, true},
		{limits.Pids, "Limits.Pids", int64(l.Pids), int64(d.Pids), &out.set.Pids, false},
		{limits.TmpSize, "Limits.TmpSize", l.TmpSize, d.TmpSize, &out.set.TmpSize, true},
		{limits.FileSize, "Limits.FileSize", l.FileSize, d.FileSize, &out.set.FileSize, true},
		{limits.OpenFiles, "Limits.OpenFiles", int64(l.OpenFiles), int64(d.OpenFiles), &out.set.OpenFiles, false},
	}
	for _, f := range ints {
		switch {
		case f.v == 0:
			*f.dst = f.def
		case f.v == NoLimit:
			out.asked = append(out.asked, f.name)
		case f.v < 0:
			return out, &ConfigError{Field: f.field, Value: strconv.FormatInt(f.v, 10), Reason: "want more than zero, or corral.NoLimit"}
		default:
			*f.dst = f.v
			out.asked = append(out.asked, f.name)
		}
	}
	if err := out.resolveCPU(l, d); err != nil {
		return out, err
	}
	return out, nil
}

func (out *limitSpec) resolveCPU(l, d Limits) error {
	switch c := l.CPUs; {
	case c == 0:
		out.set.CPUs = d.CPUs
	case c == NoLimit:
		out.asked = append(out.asked, limits.CPUs)
	case c < 0 || math.IsNaN(c) || math.IsInf(c, 0):
		return &ConfigError{Field: "Limits.CPUs", Value: strconv.FormatFloat(c, 'g', -1, 64), Reason: "want more than zero, or corral.NoLimit"}
	default:
		out.set.CPUs = c
		out.asked = append(out.asked, limits.CPUs)
	}
	switch t := l.CPUTime; {
	case t == 0:
		out.set.CPUTime = int64(d.CPUTime / time.Second)
	case t == NoLimit:
		out.asked = append(out.asked, limits.CPUTime)
	case t < 0:
		return &ConfigError{Field: "Limits.CPUTime", Value: t.String(), Reason: "want more than zero, or corral.NoLimit"}
	default:
		out.set.CPUTime = int64((t + time.Second - 1) / time.Second)
		out.asked = append(out.asked, limits.CPUTime)
	}
	slices.Sort(out.asked)
	return nil
}

// limitHost is what the host offers for limits: the rung the sandbox runs
// on, whether the caller is root, and the cgroup v2 subtree (or why none).
type limitHost struct {
	rung     Rung
	root     bool
	cgroup   *limits.Hierarchy
	noCgroup string
}

// status says whether h can enforce n, and how.
func (h limitHost) status(n limits.Name) LimitStatus {
	st := LimitStatus{Name: Limit(n)}
	ok := func(m string) LimitStatus { st.Available, st.Mechanism = true, m; return st }
	no := func(r string) LimitStatus { st.Reason = r; return st }
	if h.rung != RungFull && h.rung != RungLandlock {
		return no(fmt.Sprintf("rung %s enforces no limits", h.rung))
	}
	if h.cgroup != nil && slices.Contains(limits.Controlled(), n) {
		return ok("cgroup v2 " + map[limits.Name]string{limits.Memory: "memory.max", limits.Pids: "pids.max", limits.CPUs: "cpu.max"}[n])
	}
	switch n {
	case limits.Memory:
		return ok("RLIMIT_DATA, per process")
	case limits.Pids:
		switch {
		case h.rung != RungFull:
			return no("without a user namespace RLIMIT_NPROC counts every process of the user on the host, and " + h.noCgroup)
		case h.root:
			return no("the kernel exempts root from RLIMIT_NPROC, and " + h.noCgroup)
		}
		return ok("RLIMIT_NPROC in the sandbox's user namespace")
	case limits.CPUs:
		return no("only a cgroup can share out CPU time, and " + h.noCgroup)
	case limits.TmpSize:
		if h.rung != RungFull {
			return no("rung landlock has no private /tmp: the command's temp dir is on the host's filesystem")
		}
		return ok("tmpfs size= on /tmp and /dev/shm")
	case limits.FileSize:
		return ok("RLIMIT_FSIZE")
	case limits.OpenFiles:
		return ok("RLIMIT_NOFILE, per process")
	case limits.CPUTime:
		return ok("RLIMIT_CPU, per process")
	}
	return no("unknown limit")
}

// limitPlan is what a sandbox enforces of its limits on h: the set in
// force, each limit's status, and the warning for the limits asked for
// that h cannot enforce (FallbackWarn) or the error (FallbackFail).
type limitPlan struct {
	set      limits.Set
	statuses []LimitStatus
	warning  string
}

func planLimits(ls limitSpec, h limitHost, fallback Fallback) (*limitPlan, error) {
	p := &limitPlan{set: ls.set}
	var without []string
	for _, n := range limits.Names() {
		st := h.status(n)
		if !st.Available {
			if ls.set.Has(n) && slices.Contains(ls.asked, n) {
				if fallback != FallbackWarn {
					return nil, &SetupError{Layer: LayerLimits, Err: fmt.Errorf(
						"%s cannot be enforced: %s (Fallback \"warn\" would run without it)", ls.set.Flag(n), st.Reason)}
				}
				without = append(without, fmt.Sprintf("%s (%s)", ls.set.Flag(n), st.Reason))
			}
			p.set = p.set.Without(n)
		}
		st.Value = p.set.Value(n)
		p.statuses = append(p.statuses, st)
	}
	if len(without) > 0 {
		p.warning = "corral: running without the limits " + strings.Join(without, "; ")
	}
	return p, nil
}

// limitViolations turns the limits a command hit into Violations, each
// naming the limit and how it was set.
func limitViolations(hits []limits.Name, ls limitSpec) []Violation {
	var out []Violation
	for _, n := range hits {
		rule := ls.set.Flag(n)
		if !slices.Contains(ls.asked, n) {
			rule += " (the default)"
		}
		out = append(out, Violation{Kind: ViolationLimit, Target: string(n), Rule: rule, Count: 1})
	}
	return out
}

// limitHitter is a process that reports, after Wait, the limits its
// command ran into.
type limitHitter interface {
	LimitsHit() []limits.Name
}

// LimitsHit returns, after Wait, the limits the command ran into, one
// Violation of kind ViolationLimit each: Target names the limit ("pids"),
// Rule how it was set ("--pids 512", or "--pids 4096 (the default)").
// Dying by SIGXCPU or SIGXFSZ and a full /tmp are certain; a pids or
// memory limit is inferred (see docs/layers.md) and may be missed or, in
// rare cases, named when the command failed for another reason. It is
// empty before Wait and on backends that enforce no limits.
func (c *Cmd) LimitsHit() []Violation {
	h, ok := c.proc.(limitHitter)
	if !ok || !c.exited.Load() {
		return nil
	}
	return limitViolations(h.LimitsHit(), c.sb.spec.Limits)
}

// AllLimits returns every limit, in the order Doctor lists them.
func AllLimits() []Limit {
	out := make([]Limit, 0, len(limits.Names()))
	for _, n := range limits.Names() {
		out = append(out, Limit(n))
	}
	return out
}

// Set sets the limit name from value as the CLI's flag takes it: a size
// such as 512M or 2G for memory, tmp-size and file-size, a count for pids
// and open-files, a number of CPUs such as 1.5 for cpus, a duration such
// as 30s or 10m for cpu-time; "none" for no limit. The error says what
// was wanted, without naming the flag.
func (l *Limits) Set(name Limit, value string) error {
	if value == "none" {
		return l.set(name, NoLimit, NoLimit, NoLimit)
	}
	switch name {
	case LimitMemory, LimitTmpSize, LimitFileSize:
		n, err := limits.ParseSize(value)
		if err != nil {
			return fmt.Errorf("%v, or none", err)
		}
		return l.set(name, n, 0, 0)
	case LimitPids, LimitOpenFiles:
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil || n <= 0 {
			return errors.New("want a whole number more than zero, or none")
		}
		return l.set(name, n, 0, 0)
	case LimitCPUs:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return errors.New("want a number of CPUs more than zero such as 1.5, or none")
		}
		return l.set(name, 0, f, 0)
	case LimitCPUTime:
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return errors.New("want a duration more than zero such as 30s or 10m, or none")
		}
		return l.set(name, 0, 0, d)
	}
	return fmt.Errorf("unknown limit %q", name)
}

func (l *Limits) set(name Limit, n int64, f float64, d time.Duration) error {
	switch name {
	case LimitMemory:
		l.Memory = n
	case LimitPids:
		l.Pids = int(n)
	case LimitCPUs:
		l.CPUs = f
	case LimitTmpSize:
		l.TmpSize = n
	case LimitFileSize:
		l.FileSize = n
	case LimitOpenFiles:
		l.OpenFiles = int(n)
	case LimitCPUTime:
		l.CPUTime = d
	default:
		return fmt.Errorf("unknown limit %q", name)
	}
	return nil
}

// Merge returns l with every field that over sets (non-zero) taken from
// over: how flags given on a command line lay over a config file's.
func (l Limits) Merge(over Limits) Limits {
	pick := func(a, b int64) int64 {
		if b != 0 {
			return b
		}
		return a
	}
	l.Memory = pick(l.Memory, over.Memory)
	l.Pids = int(pick(int64(l.Pids), int64(over.Pids)))
	l.TmpSize = pick(l.TmpSize, over.TmpSize)
	l.FileSize = pick(l.FileSize, over.FileSize)
	l.OpenFiles = int(pick(int64(l.OpenFiles), int64(over.OpenFiles)))
	l.CPUTime = time.Duration(pick(int64(l.CPUTime), int64(over.CPUTime)))
	if over.CPUs != 0 {
		l.CPUs = over.CPUs
	}
	return l
}

// LimitValue is one limit of a Config once the defaults are filled in.
type LimitValue struct {
	Name Limit `json:"name"`
	// Value is as the CLI's flag takes it; "none" for no limit.
	Value string `json:"value"`
	// Default says the Config left the limit to its default.
	Default bool `json:"default,omitempty"`
}

// Values returns every limit of l once the defaults are filled in, in the
// order Doctor lists them, whatever the host can enforce (Doctor says
// that).
func (l Limits) Values() ([]LimitValue, error) {
	ls, err := l.resolve()
	if err != nil {
		return nil, err
	}
	var out []LimitValue
	for _, n := range limits.Names() {
		v := LimitValue{Name: Limit(n), Value: ls.set.Value(n), Default: !slices.Contains(ls.asked, n)}
		if v.Value == "" {
			v.Value = "none"
		}
		out = append(out, v)
	}
	return out, nil
}
