package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProcKB(t *testing.T) {
	status := []byte("Name:\texe\nVmPeak:\t 1240000 kB\nVmHWM:\t    6320 kB\nVmRSS:\t    6300 kB\n")
	for _, tc := range []struct {
		data string
		key  string
		want int64
		ok   bool
	}{
		{string(status), "VmHWM", 6320, true},
		{string(status), "VmRSS", 6300, true},
		{string(status), "Vm", 0, false},
		{"MemTotal:       24684292 kB\nMemAvailable:   24178020 kB\n", "MemAvailable", 24178020, true},
		{"VmHWM:\tlots kB\n", "VmHWM", 0, false},
		{"", "VmHWM", 0, false},
	} {
		got, ok := procKB([]byte(tc.data), tc.key)
		assert.Equal(t, tc.ok, ok, tc.key)
		assert.Equal(t, tc.want, got, tc.key)
	}
}
