//go:build linux

package seccomp

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Return values of a seccomp filter (the action in the high 16 bits, data
// in the low).
const (
	retKillProcess = 0x8000_0000
	retErrno       = 0x0005_0000
	retAllow       = 0x7fff_0000
)

// Audit architecture tokens a filter compares seccomp_data.arch against.
var auditArch = map[string]uint32{
	"amd64": 0xc000_003e,
	"arm64": 0xc000_00b7,
	"386":   0x4000_0003,
}

// seccompData is the input of a filter, struct seccomp_data.
type seccompData struct {
	nr   int32
	arch uint32
	args [6]uint64
}

// bytes lays d out as the kernel does on a little-endian machine.
func (d seccompData) bytes() []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], uint32(d.nr))
	binary.LittleEndian.PutUint32(b[4:], d.arch)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// simulate runs a classic BPF seccomp program on d and returns what the
// kernel would act on.
func simulate(prog []unix.SockFilter, d seccompData) (uint32, error) {
	return run(prog, d.bytes())
}
