//go:build unix

package limits

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func exited(code int) syscall.WaitStatus { return syscall.WaitStatus(code << 8) }

func TestDetect(t *testing.T) {
	all := Set{Memory: 64 << 20, Pids: 50, TmpSize: 64 << 20, FileSize: 1 << 20, OpenFiles: 64, CPUTime: 1}
	for _, tc := range []struct {
		name string
		set  Set
		o    Outcome
		want []Name
	}{
		{"clean exit", all, Outcome{Status: exited(0), TasksLeft: 3, MaxRSS: 10 << 20}, nil},
		{"SIGXCPU", all, Outcome{Status: syscall.WaitStatus(syscall.SIGXCPU)}, []Name{CPUTime}},
		{"SIGXCPU via a shell", all, Outcome{Status: exited(128 + int(syscall.SIGXCPU))}, []Name{CPUTime}},
		{"SIGXCPU without the limit", Set{}, Outcome{Status: syscall.WaitStatus(syscall.SIGXCPU)}, nil},
		{"SIGXFSZ", all, Outcome{Status: syscall.WaitStatus(syscall.SIGXFSZ)}, []Name{FileSize}},
		{"tmp full", all, Outcome{Status: exited(1), TmpFull: true}, []Name{TmpSize}},
		{"pids filled", all, Outcome{Status: exited(2), TasksLeft: 49}, []Name{Pids}},
		{"memory near", all, Outcome{Status: exited(2), MaxRSS: 40 << 20}, []Name{Memory}},
		{"pids filled, command succeeded", all, Outcome{Status: exited(0), TasksLeft: 49}, nil},
		{"memory near, command succeeded", all, Outcome{Status: exited(0), MaxRSS: 40 << 20}, nil},
		{"cgroup counted", all, Outcome{Status: exited(0), Cgroup: []Name{Pids, Memory}}, []Name{Memory, Pids}},
		{"cgroup without the limit", Set{}, Outcome{Status: exited(0), Cgroup: []Name{Pids}}, nil},
	} {
		assert.Equal(t, tc.want, Detect(tc.set, tc.o), tc.name)
	}
}
