package seccomp

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// dataSize is the size of struct seccomp_data, a filter's input.
const dataSize = 64

// run executes a classic BPF seccomp program on data (struct seccomp_data,
// in this machine's byte order) and returns what the kernel would act on.
func run(prog []unix.SockFilter, data []byte) (uint32, error) {
	ret, _, err := runLoads(prog, data)
	return ret, err
}

// runLoads is run, and also tells whether the program looked at more of
// data than the call number and architecture: when not, its answer holds
// for every call of that number and architecture.
// It knows the instructions a seccomp filter may use, and fails on any
// other, on a load outside data and on a program that ends without
// returning: the kernel refuses to load such programs, so an error means
// prog is not one it runs.
func runLoads(prog []unix.SockFilter, data []byte) (ret uint32, args bool, err error) {
	var a, x uint32
	var mem [16]uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		k := in.K
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if k%4 != 0 || int(k)+4 > len(data) {
				return 0, args, fmt.Errorf("pc %d: load at %d", pc, k)
			}
			args = args || k >= 8
			a = binary.NativeEndian.Uint32(data[k:])
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
			return k, args, nil
		case unix.BPF_RET | unix.BPF_A:
			return a, args, nil
		default:
			return 0, args, fmt.Errorf("pc %d: instruction %#x not known", pc, in.Code)
		}
	}
	return 0, args, fmt.Errorf("program ends without returning")
}

func jump(in unix.SockFilter, taken bool) int {
	if taken {
		return int(in.Jt)
	}
	return int(in.Jf)
}
