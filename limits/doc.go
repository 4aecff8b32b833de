// Package limits holds the resource limits of a sandbox: what each limit
// is, how the sandbox's init applies it to the command (rlimits), and the
// cgroup v2 files that enforce the limits a process tree shares.
//
// # Mechanisms
//
// Every limit but CPUs has an rlimit, set by the init on itself right
// before it starts the command, which inherits it: the command has no
// capability in the initial user namespace, so it cannot raise a hard
// limit again. An rlimit is per process (RLIMIT_NPROC per user), so it
// bounds a runaway process, not a tree of them: the shared budget is the
// cgroup's (memory.max, pids.max, cpu.max), used where the host hands the
// caller a writable cgroup v2 subtree with those controllers.
//
//   - memory: RLIMIT_DATA, the private writable memory of each process
//     (heap, brk, private mappings). It does not count shared memory, which
//     the init's filter keeps the command from making without a cgroup
//     (see nsjail's sharedMemoryFilter). Not RLIMIT_AS: runtimes reserve far
//     more address space than they use (V8's pointer cage, Go's arenas,
//     the JVM's heap reservation), and would fail at start-up under an
//     address-space limit that their real use never reaches. With cgroup
//     v2, memory.max also counts the page cache and tmpfs pages.
//   - pids: RLIMIT_NPROC counts the tasks (processes and threads) of one
//     user in one user namespace. In the sandbox's own user namespace that
//     is exactly the sandbox's tasks, the init's threads among them: the
//     command's first process gets the limit plus the init's threads at
//     its first exec ([ApplyTasks]), for a limit the caller asked for;
//     otherwise the init adds room for them to its own. It is no limit without
//     a user namespace (it would count every process of the user on the
//     host) nor for root, whom the kernel exempts: there only pids.max
//     holds.
//   - file-size: RLIMIT_FSIZE (SIGXFSZ, or EFBIG where it is ignored).
//   - open-files: RLIMIT_NOFILE (EMFILE).
//   - cpu-time: RLIMIT_CPU, CPU seconds of each process: SIGXCPU at the
//     limit, SIGKILL a second later.
//   - tmp-size: the size= of the sandbox's private /tmp and /dev/shm
//     tmpfs (ENOSPC); only where those mounts exist.
//   - cpus: cpu.max only.
//
// # cgroup v2
//
// The cgroup files are written directly ([Cgroup]): a sandbox needs a
// directory, three limit files, cgroup.procs and two event counters. The
// libraries that wrap them (containerd/cgroups, runc's libcontainer/cgroups)
// bring systemd's D-Bus client and package-level state that every process
// of the binary would initialise, and the sandbox's init is the same
// binary, started once per command. Every function takes the hierarchy's
// root directory, so the whole path is tested against a temporary
// directory laid out like cgroupfs.
//
// Sizes are read by github.com/docker/go-units, whose package init costs
// every process of the binary some 6 µs (GODEBUG=inittrace=1): a map of
// names, no regexp.
//
// # Telling which limit was hit
//
// The kernel does not say; [Detect] infers it from what the init sees when
// the command exits: death by SIGXCPU or SIGXFSZ (or a shell's 128+N for
// them), a private /tmp left full, tasks still alive at the pids limit,
// a peak resident size near the memory limit, or the cgroup's own event
// counters. The first ones are certain; the others are hints, and count
// only for a command that failed.
//
// This package is an implementation part of corral, top-level so its
// design can be read and tested on its own. It carries no compatibility
// promise: its API changes with corral's needs. Programs use package
// corral.
package limits
