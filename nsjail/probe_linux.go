package nsjail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/reexec"
)

// The probe finds out which namespace features this host grants. The
// caller starts probeName with a plain vfork (cheap from any heap); it
// clones probeNSName into the namespaces a sandbox uses, which tries each
// mount the init needs and reports back.
const (
	probeName   = "__sandbox-probe"
	probeNSName = "__sandbox-probe-ns"
)

// check is the outcome of one probe step.
type check struct {
	OK    bool
	Err   string        `json:",omitempty"`
	Errno syscall.Errno `json:",omitempty"`
}

func checkOf(err error) check {
	if err == nil {
		return check{OK: true}
	}
	c := check{Err: err.Error()}
	errors.As(err, &c.Errno)
	return c
}

// probeResult says what the namespace features did.
type probeResult struct {
	UserNS  check // clone(CLONE_NEWUSER)
	MountNS check // clone(CLONE_NEWNS), then mounting in it
	PIDNS   check // clone(CLONE_NEWPID)
	NetNS   check // unshare(CLONE_NEWNET) and bringing lo up
	Proc    check // a fresh procfs
	Overlay check // overlayfs inside the user namespace
	// KernelObjects is clone(CLONE_NEWIPC|CLONE_NEWUTS|CLONE_NEWCGROUP).
	KernelObjects check
}

// runProbe runs the probe in a re-executed child. It takes a few
// milliseconds; callers cache it.
func runProbe() (*probeResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, reexec.Self, probeName)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: unix.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("probe: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var r probeResult
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	return &r, nil
}

// probeMain clones the inner probe with the sandbox's namespace flags. When
// that fails it narrows down which namespace the host refuses.
func probeMain([]string) int {
	var r probeResult
	out, err := runProbeNS(sandboxNS, "check")
	if err == nil && json.Unmarshal(out, &r) == nil {
		r.UserNS, r.KernelObjects = check{OK: true}, check{OK: true}
	} else {
		r = narrow(err)
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// narrow clones one namespace at a time after the full clone failed.
func narrow(full error) probeResult {
	r := probeResult{UserNS: checkOf(cloneOnly(unix.CLONE_NEWUSER))}
	if !r.UserNS.OK {
		r.MountNS, r.PIDNS, r.KernelObjects = r.UserNS, r.UserNS, r.UserNS
	} else {
		r.MountNS = checkOf(cloneOnly(unix.CLONE_NEWUSER | unix.CLONE_NEWNS))
		r.PIDNS = checkOf(cloneOnly(unix.CLONE_NEWUSER | unix.CLONE_NEWPID))
		r.KernelObjects = checkOf(cloneOnly(unix.CLONE_NEWUSER | kernelObjectNS))
		if r.MountNS.OK && r.PIDNS.OK && !r.KernelObjects.OK {
			// The rest can still be tried, for the doctor to name only
			// what is missing.
			var rest probeResult
			out, err := runProbeNS(sandboxNS&^kernelObjectNS, "check")
			if err == nil && json.Unmarshal(out, &rest) == nil {
				rest.UserNS, rest.KernelObjects = r.UserNS, r.KernelObjects
				return rest
			}
		}
		if r.MountNS.OK && r.PIDNS.OK && r.KernelObjects.OK {
			r.MountNS = checkOf(full) // each alone works; together they do not
		}
	}
	skipped := check{Err: "not tried: no user, mount and PID namespaces"}
	r.NetNS, r.Proc, r.Overlay = skipped, skipped, skipped
	return r
}

func cloneOnly(flags uintptr) error {
	_, err := runProbeNS(flags, "noop")
	return err
}

// runProbeNS runs the inner probe in new namespaces, mapped to our own ids.
func runProbeNS(flags uintptr, mode string) ([]byte, error) {
	uid, gid := os.Getuid(), os.Getgid()
	cmd := exec.Command(reexec.Self, probeNSName, mode)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: initCaps, // what the init keeps: an unprivileged exec would drop them
		Pdeathsig:   unix.SIGKILL,
	}
	out, err := cmd.Output()
	var se *os.SyscallError
	if errors.As(err, &se) {
		return nil, se // the clone itself failed: keep the errno
	}
	return out, err
}

// probeNSMain runs inside the new namespaces. Every mount lands in its own
// mount namespace and disappears with it.
func probeNSMain(args []string) int {
	if len(args) > 0 && args[0] == "noop" {
		return 0
	}
	runtime.LockOSThread() // unshare(CLONE_NEWNET) changes this thread only
	var r probeResult
	r.PIDNS = checkOf(nil)
	if os.Getpid() != 1 {
		r.PIDNS = checkOf(errors.New("not PID 1 after clone(CLONE_NEWPID)"))
	}
	r.MountNS = checkOf(scratchMount())
	if r.MountNS.OK {
		r.Proc = checkOf(mountAt("proc", "/tmp/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""))
		r.Overlay = checkOf(overlay())
	} else {
		r.Proc, r.Overlay = r.MountNS, r.MountNS
	}
	r.NetNS = checkOf(netNS())
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// scratchMount keeps mounts from propagating, then covers /tmp with a
// tmpfs to probe on.
func scratchMount() error {
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return os.NewSyscallError("mount(MS_SLAVE)", err)
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return os.NewSyscallError("mount(tmpfs)", err)
	}
	return nil
}

func mountAt(src, dir, fstype string, flags uintptr, data string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := unix.Mount(src, dir, fstype, flags, data); err != nil {
		return os.NewSyscallError("mount("+fstype+")", err)
	}
	return nil
}

func overlay() error {
	for _, d := range []string{"lower", "upper", "work"} {
		if err := os.Mkdir("/tmp/"+d, 0o700); err != nil {
			return err
		}
	}
	return mountAt("overlay", "/tmp/merged", "overlay", 0,
		"lowerdir=/tmp/lower,upperdir=/tmp/upper,workdir=/tmp/work")
}

func netNS() error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return os.NewSyscallError("unshare(CLONE_NEWNET)", err)
	}
	return loopbackUp()
}
