package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// units maps a size suffix, lower-cased, to its multiplier. Bare K, M, G, T
// are binary, as memory sizes usually are.
var units = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// ParseSize reads a byte count such as "0", "1048576", "256MiB", "1GiB" or
// "1.5GiB". Fractions round down to whole bytes.
func ParseSize(s string) (int64, error) {
	num, unit := splitUnit(strings.TrimSpace(s))
	mult, ok := units[strings.ToLower(unit)]
	if num == "" || !ok {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/mult {
			return 0, fmt.Errorf("size %q: not a whole number of bytes that fits in 63 bits", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: not a number of bytes that fits in 63 bits", s)
	}
	return int64(f * float64(mult)), nil
}

// splitUnit cuts s after its leading digits and dots.
func splitUnit(s string) (num, unit string) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// FormatSize prints n bytes in the largest binary unit it reaches, with at
// most one decimal: "0 B", "512 KiB", "2 GiB", "1.5 GiB".
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			v := strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64)
			return strings.TrimSuffix(v, ".0") + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
