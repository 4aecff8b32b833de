//go:build linux && cgo && libseccomp

package seccomp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// Compile turns rules into a BPF program for the native architecture. Calls
// through any other architecture's entry points kill the process.
func Compile(rules []Rule) ([]byte, error) {
	return compileFor(runtime.GOARCH, rules)
}

// scmpArchs name the architectures filters can be generated for on any
// host: the ones whose Linux ABI shares the generic values the policy
// matches on (see consts.go).
var scmpArchs = map[string]libseccomp.ScmpArch{
	"amd64": libseccomp.ArchAMD64,
	"arm64": libseccomp.ArchARM64,
}

// compileFor is Compile for the Go architecture goarch, which is the
// native one or one of scmpArchs.
func compileFor(goarch string, rules []Rule) ([]byte, error) {
	f, err := libseccomp.NewFilter(libseccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	defer f.Release()
	if goarch != runtime.GOARCH {
		arch, ok := scmpArchs[goarch]
		if !ok {
			return nil, fmt.Errorf("seccomp: cannot compile for %s on %s", goarch, runtime.GOARCH)
		}
		if err := f.AddArch(arch); err != nil {
			return nil, fmt.Errorf("seccomp: add %s: %w", goarch, err)
		}
		if err := f.RemoveArch(libseccomp.ArchNative); err != nil {
			return nil, fmt.Errorf("seccomp: remove native arch: %w", err)
		}
	}
	if err := f.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		return nil, fmt.Errorf("seccomp: bad-arch action: %w", err)
	}
	for _, r := range rules {
		if err := addRule(f, r); err != nil {
			return nil, err
		}
	}
	return export(f)
}

func addRule(f *libseccomp.ScmpFilter, r Rule) error {
	call, err := libseccomp.GetSyscallFromName(r.Syscall)
	if err != nil {
		return fmt.Errorf("seccomp: syscall %q: %w", r.Syscall, err)
	}
	action := libseccomp.ActErrno.SetReturnCode(int16(r.Errno))
	if r.Arg == nil {
		err = f.AddRule(call, action)
	} else {
		var conds []libseccomp.ScmpCondition
		for _, a := range []*Arg{r.Arg, r.And} {
			if a == nil {
				continue
			}
			var cond libseccomp.ScmpCondition
			if cond, err = libseccomp.MakeCondition(a.Index, libseccomp.CompareMaskedEqual, a.Mask, a.Value); err != nil {
				break
			}
			conds = append(conds, cond)
		}
		if err == nil {
			err = f.AddRuleConditional(call, action, conds)
		}
	}
	if err != nil {
		return fmt.Errorf("seccomp: rule for %s: %w", r.Syscall, err)
	}
	return nil
}

// export returns the program's bytes. libseccomp before 2.6 can only write
// them to a file descriptor, so they go through a memfd there.
func export(f *libseccomp.ScmpFilter) ([]byte, error) {
	if b, err := f.ExportBPFMem(); err == nil {
		return b, nil
	}
	fd, err := unix.MemfdCreate("corral-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("seccomp: memfd_create: %w", err)
	}
	mf := os.NewFile(uintptr(fd), "corral-seccomp")
	defer mf.Close()
	if err := f.ExportBPF(mf); err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	if _, err := mf.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(mf)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || len(b)%instructionSize != 0 {
		return nil, errors.New("seccomp: export produced no program")
	}
	return b, nil
}

// compiler reports whether filters can be compiled here; when not, why.
func compiler() (bool, string) {
	if _, err := libseccomp.GetNativeArch(); err != nil {
		return false, compilerVersion() + " does not know this architecture"
	}
	return true, ""
}

// compilerVersion names the filter compiler.
func compilerVersion() string {
	major, minor, micro := libseccomp.GetLibraryVersion()
	return fmt.Sprintf("libseccomp %d.%d.%d", major, minor, micro)
}
