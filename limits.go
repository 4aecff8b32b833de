package corral

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
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
	// in bytes, and refuses the command shared memory, which that does not
	// count; with cgroup v2, the whole sandbox's memory, shared memory and
	// tmpfs pages included (memory.max).
	Memory int64
	// Pids caps the command's tasks at once, processes and threads
	// together, the command itself among them: 3 lets it start two more.
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
