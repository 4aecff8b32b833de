package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CheckHeap refuses a parent heap larger than the memory available now:
// growing into the OOM killer would end the run instead of measuring it.
func CheckHeap(heap int64) error {
	if heap == 0 {
		return nil
	}
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return nil // cannot tell; let the allocation decide
	}
	avail, ok := procKB(data, "MemAvailable")
	if ok && heap > avail*1024 {
		return fmt.Errorf("more than the %s of memory available", FormatSize(avail*1024))
	}
	return nil
}

// procKB reads the value of a "Key:   N kB" line, the format of
// /proc/meminfo and /proc/PID/status.
func procKB(data []byte, key string) (int64, bool) {
	for line := range strings.SplitSeq(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, key+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		return kb, err == nil
	}
	return 0, false
}
