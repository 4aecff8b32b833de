package nsjail

import (
	"bufio"
	"encoding/binary"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/seccomp"
)

// refusedCall is the violation of call n, which the filter refuses with
// errno: the call by name, with a socket's family ("socket(AF_UNIX)"), and
// marked a probe when it is one the C library makes on its own.
func refusedCall(n seccomp.Notification, errno unix.Errno) Violation {
	name := seccomp.CallName(n.Nr)
	v := Violation{Kind: KindSyscall, Path: name, Reason: ReasonFilter, Match: unix.ErrnoName(errno), Process: comm(n.Pid)}
	if name == "socket" || name == "socketpair" {
		v.Path = name + "(" + familyName(int(int32(n.Args[0]))) + ")"
		v.Probe = name == "socket" && libcProbe(n)
	}
	return v
}

// familyName names a socket's address family as C does ("AF_UNIX").
func familyName(af int) string {
	names := map[int]string{
		unix.AF_UNIX: "AF_UNIX", unix.AF_INET: "AF_INET", unix.AF_INET6: "AF_INET6",
		unix.AF_NETLINK: "AF_NETLINK", unix.AF_PACKET: "AF_PACKET", unix.AF_BLUETOOTH: "AF_BLUETOOTH",
		unix.AF_VSOCK: "AF_VSOCK", unix.AF_ALG: "AF_ALG", unix.AF_KEY: "AF_KEY", unix.AF_XDP: "AF_XDP",
	}
	if s, ok := names[af]; ok {
		return s
	}
	return "family " + strconv.Itoa(af)
}

// libcProbe tells whether socket call n is one the C library's name
// service makes on its own, on every lookup of a user, group or host
// (`ls -l`, `id`, a prompt): glibc's look for nscd's socket, an nss
// module's for systemd's user database or resolver. Each does without when
// refused, as on a host that runs neither, and says nothing.
//
// It is told by where the call comes from: a unix stream socket made by
// the C library's socket(), called from the C library itself or from an
// nss module. On x86-64 the wrapper is a leaf, so the address it returns
// to is the word at the stack pointer of the waiting thread. Elsewhere, or
// where the process cannot be read, no call is a probe.
func libcProbe(n seccomp.Notification) bool {
	if runtime.GOARCH != "amd64" || n.Args[0] != unix.AF_UNIX || n.Args[1]&0xf != unix.SOCK_STREAM {
		return false
	}
	sp, ok := stackPointer(n)
	if !ok {
		return false
	}
	var b [8]byte
	if !readMemory(n.Pid, sp, b[:]) {
		return false
	}
	files := mappedFiles(n.Pid, n.IP, binary.LittleEndian.Uint64(b[:]))
	if len(files) != 2 || !isLibc(files[0]) {
		return false
	}
	caller := path.Base(files[1])
	return isLibc(files[1]) || strings.HasPrefix(caller, "libnss_")
}

// isLibc tells whether file is a C library (glibc's or musl's).
func isLibc(file string) bool {
	base := path.Base(file)
	return strings.HasPrefix(base, "libc.so") || strings.HasPrefix(base, "libc-") ||
		strings.HasPrefix(base, "ld-musl-") || strings.HasPrefix(base, "libc.musl-")
}

// stackPointer reads the stack pointer of call n's waiting thread from
// /proc/TID/syscall ("NR ARG1..ARG6 SP PC"), checking it waits in call n.
func stackPointer(n seccomp.Notification) (uint64, bool) {
	var line string
	err := ptraced(func() error {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(n.Pid) + "/syscall")
		line = string(b)
		return err
	})
	f := strings.Fields(line)
	if err != nil || len(f) != 9 || f[0] != strconv.FormatUint(uint64(n.Nr), 10) {
		return 0, false
	}
	sp, err := strconv.ParseUint(strings.TrimPrefix(f[7], "0x"), 16, 64)
	return sp, err == nil
}

// mappedFiles returns the files thread tid has mapped at each of addrs,
// "" for an address in no file; nil when its maps cannot be read.
func mappedFiles(tid int, addrs ...uint64) []string {
	var data []byte
	err := ptraced(func() (err error) {
		data, err = os.ReadFile("/proc/" + strconv.Itoa(tid) + "/maps")
		return err
	})
	if err != nil {
		return nil
	}
	out := make([]string, len(addrs))
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		for i, a := range addrs {
			if start <= a && a < end {
				out[i] = strings.Join(f[5:], " ")
			}
		}
	}
	return out
}
