//go:build linux

package seccomp

import (
	"encoding/binary"
	"fmt"

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
// kernel would act on. It knows the instructions a seccomp filter may use.
func simulate(prog []unix.SockFilter, d seccompData) (uint32, error) {
	data := d.bytes()
	var a, x uint32
	var mem [16]uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		k := in.K
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if k%4 != 0 || int(k)+4 > len(data) {
				return 0, fmt.Errorf("pc %d: load at %d", pc, k)
			}
			a = binary.LittleEndian.Uint32(data[k:])
		case unix.BPF_LD | unix.BPF_IMM:
			a = k
		case unix.BPF_LDX | unix.BPF_IMM:
			x = k
		case unix.BPF_LD | unix.BPF_MEM:
			a = mem[k%16]
		case unix.BPF_LDX | unix.BPF_MEM:
			x = mem[k%16]
		case unix.BPF_ST:
			mem[k%16] = a
		case unix.BPF_STX:
			mem[k%16] = x
		case unix.BPF_MISC | unix.BPF_TAX:
			x = a
		case unix.BPF_MISC | unix.BPF_TXA:
			a = x
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			a &= k
		case unix.BPF_ALU | unix.BPF_OR | unix.BPF_K:
			a |= k
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_X:
			a &= x
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(k)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += jump(in, a == k)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			pc += jump(in, a > k)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			pc += jump(in, a >= k)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			pc += jump(in, a&k != 0)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_X:
			pc += jump(in, a == x)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_X:
			pc += jump(in, a > x)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_X:
			pc += jump(in, a >= x)
		case unix.BPF_RET | unix.BPF_K:
			return k, nil
		case unix.BPF_RET | unix.BPF_A:
			return a, nil
		default:
			return 0, fmt.Errorf("pc %d: instruction %#x not simulated", pc, in.Code)
		}
	}
	return 0, fmt.Errorf("program ends without returning")
}

func jump(in unix.SockFilter, taken bool) int {
	if taken {
		return int(in.Jt)
	}
	return int(in.Jf)
}
