package limits

import (
	"fmt"
	"strconv"
	"time"

	units "github.com/docker/go-units"
)

// Name is one limit, as the CLI flag spells it without its dashes.
type Name string

// The limits, in the order Names lists them.
const (
	Memory    Name = "memory"
	Pids      Name = "pids"
	CPUs      Name = "cpus"
	TmpSize   Name = "tmp-size"
	FileSize  Name = "file-size"
	OpenFiles Name = "open-files"
	CPUTime   Name = "cpu-time"
)

// Names lists every limit.
func Names() []Name {
	return []Name{Memory, Pids, CPUs, TmpSize, FileSize, OpenFiles, CPUTime}
}

// Set is the limits of one sandbox; zero means no limit.
type Set struct {
	Memory    int64   `json:",omitempty"` // bytes of each process's private writable memory
	Pids      int64   `json:",omitempty"` // tasks
	CPUs      float64 `json:",omitempty"` // CPUs' worth of time per period
	TmpSize   int64   `json:",omitempty"` // bytes of /tmp and of /dev/shm each
	FileSize  int64   `json:",omitempty"` // bytes
	OpenFiles int64   `json:",omitempty"` // descriptors per process
	CPUTime   int64   `json:",omitempty"` // seconds per process
}

// count is the field of an integer limit n, nil for CPUs (a fraction)
// and unknown names.
func (s *Set) count(n Name) *int64 {
	switch n {
	case Memory:
		return &s.Memory
	case Pids:
		return &s.Pids
	case TmpSize:
		return &s.TmpSize
	case FileSize:
		return &s.FileSize
	case OpenFiles:
		return &s.OpenFiles
	case CPUTime:
		return &s.CPUTime
	}
	return nil
}

// Has reports whether s limits n.
func (s Set) Has(n Name) bool {
	if n == CPUs {
		return s.CPUs > 0
	}
	p := s.count(n)
	return p != nil && *p > 0
}

// Without returns s with n unlimited.
func (s Set) Without(n Name) Set {
	if n == CPUs {
		s.CPUs = 0
	} else if p := s.count(n); p != nil {
		*p = 0
	}
	return s
}

// Value is n's value in s as the CLI takes it ("512MiB", "4096", "1.5",
// "30s"), or "" when s does not limit n.
func (s Set) Value(n Name) string {
	if !s.Has(n) {
		return ""
	}
	switch n {
	case Memory:
		return Size(s.Memory)
	case Pids:
		return strconv.FormatInt(s.Pids, 10)
	case CPUs:
		return strconv.FormatFloat(s.CPUs, 'f', -1, 64)
	case TmpSize:
		return Size(s.TmpSize)
	case FileSize:
		return Size(s.FileSize)
	case OpenFiles:
		return strconv.FormatInt(s.OpenFiles, 10)
	case CPUTime:
		return (time.Duration(s.CPUTime) * time.Second).String()
	}
	return ""
}

// Flag is n in s as the flag that asks for it: "--pids 512".
func (s Set) Flag(n Name) string { return fmt.Sprintf("--%s %s", n, s.Value(n)) }

// Size formats a byte count the way ParseSize reads it back: exact,
// in the largest binary unit that divides it.
func Size(b int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if b >= 1<<u.shift && b%(1<<u.shift) == 0 {
			return strconv.FormatInt(b>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}

// ParseSize reads a size such as 512M, 2G, 1.5GiB or 4096 (bytes), in
// binary units: K is 1024.
func ParseSize(s string) (int64, error) {
	n, err := units.RAMInBytes(s)
	if err != nil {
		return 0, fmt.Errorf("want a size such as 512M or 2G")
	}
	if n <= 0 {
		return 0, fmt.Errorf("must be more than zero")
	}
	return n, nil
}
