// layers_probe attempts one escape per subcommand and prints "name result"
// lines, where result is "ok" or the errno's name. It runs the same way
// inside and outside a sandbox, so the two runs can be compared.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/shm.h>
#include <linux/netlink.h>
#include <linux/vm_sockets.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *res(long r) {
	static char buf[32];
	if (r >= 0) return "ok";
	const char *n = strerrorname_np(errno);
	if (n) return n;
	snprintf(buf, sizeof buf, "E%d", errno);
	return buf;
}

static void report(const char *name, long r) { printf("%s %s\n", name, res(r)); }

// fork_clone calls the raw clone syscall the way fork would, with extra
// flags; the child exits at once.
static long fork_clone(unsigned long flags) {
	long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (r == 0) _exit(0);
	if (r > 0) waitpid(r, 0, 0);
	return r;
}

// in_child runs unshare(flags) in a child, so the probe itself stays in its
// namespaces for the calls that follow.
static long in_child_unshare(unsigned long flags) {
	int st;
	pid_t pid = fork();
	if (pid == 0) _exit(syscall(SYS_unshare, flags) < 0 ? errno : 0);
	if (pid < 0 || waitpid(pid, &st, 0) < 0) return -1;
	if (WEXITSTATUS(st) == 0) return 0;
	errno = WEXITSTATUS(st);
	return -1;
}

// Every call gets arguments that fail harmlessly, or do nothing lasting,
// when the kernel runs it: the point is only whether the kernel ran it.
static void syscalls(void) {
	char page[64] = {0};
	struct iovec local = {page, 8}, remote = {page + 8, 8};
	struct timex tx = {0};
	struct timespec ts = {0};
	struct clone_args ca = {0};
	report("mount", syscall(SYS_mount, "none", "/nonexistent-corral", (char *)1, 0, 0));
	report("umount2", syscall(SYS_umount2, "/nonexistent-corral", 0));
	report("pivot_root", syscall(SYS_pivot_root, "/nonexistent-corral-a", "/nonexistent-corral-b"));
	report("chroot", syscall(SYS_chroot, "/nonexistent-corral"));
	report("move_mount", syscall(SYS_move_mount, -1, "", -1, "", ~0u));
	report("open_tree", syscall(SYS_open_tree, -1, "", ~0u));
	report("fsopen", syscall(SYS_fsopen, "nonexistent-corral-fs", 0));
	report("fsconfig", syscall(SYS_fsconfig, -1, 0, 0, 0, 0));
	report("fsmount", syscall(SYS_fsmount, -1, ~0u, 0));
	report("fspick", syscall(SYS_fspick, -1, "", ~0u));
	report("mount_setattr", syscall(SYS_mount_setattr, -1, "", ~0u, 0, 0));
	report("unshare", in_child_unshare(CLONE_NEWUSER));
	report("setns", syscall(SYS_setns, -1, 0));
	report("clone_newuser", fork_clone(CLONE_NEWUSER));
	report("clone_newnet", fork_clone(CLONE_NEWUSER | CLONE_NEWNET));
	report("clone3", syscall(SYS_clone3, &ca, 0));
	report("keyctl", syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3 /* session */, 0));
	report("add_key", syscall(SYS_add_key, "nonexistent-corral-type", "d", "x", 1, -2));
	report("request_key", syscall(SYS_request_key, "nonexistent-corral-type", "d", 0, 0));
	report("bpf", syscall(SYS_bpf, -1, 0, 0));
	report("perf_event_open", syscall(SYS_perf_event_open, 0, 0, -1, -1, 0));
	report("kexec_load", syscall(SYS_kexec_load, 0, 0, 0, ~0ul));
	report("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, 0, ~0ul));
	report("init_module", syscall(SYS_init_module, 0, 0, ""));
	report("finit_module", syscall(SYS_finit_module, -1, "", 0));
	report("delete_module", syscall(SYS_delete_module, "nonexistent_corral", O_NONBLOCK));
	report("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, 0, 0));
	report("userfaultfd", syscall(SYS_userfaultfd, 1 /* UFFD_USER_MODE_ONLY */));
	report("process_vm_readv", syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0));
	report("process_vm_writev", syscall(SYS_process_vm_writev, getpid(), &local, 1, &remote, 1, 0));
	report("ptrace", syscall(SYS_ptrace, PTRACE_PEEKUSER, getpid(), 0, 0));
	report("io_uring_setup", syscall(SYS_io_uring_setup, 0, 0));
	report("io_uring_enter", syscall(SYS_io_uring_enter, -1, 0, 0, 0, 0, 0));
	report("io_uring_register", syscall(SYS_io_uring_register, -1, 0, 0, 0));
	report("acct", syscall(SYS_acct, "/nonexistent-corral"));
	report("swapon", syscall(SYS_swapon, "/nonexistent-corral", 0));
	report("swapoff", syscall(SYS_swapoff, "/nonexistent-corral"));
	report("reboot", syscall(SYS_reboot, 0, 0, 0, 0));
	report("syslog", syscall(SYS_syslog, 10 /* SIZE_BUFFER */, 0, 0));
	report("quotactl", syscall(SYS_quotactl, 0, 0, 0, 0));
	report("settimeofday", syscall(SYS_settimeofday, 0, 0));
	report("clock_settime", syscall(SYS_clock_settime, -1, &ts));
	report("adjtimex", syscall(SYS_adjtimex, &tx));
	report("clock_adjtime", syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
}

// terminal injects a keystroke into the terminal on stdin, after making it
// the controlling terminal of a new session.
static void terminal(void) {
	char c = ' ';
	setsid();
	report("tiocsctty", ioctl(0, TIOCSCTTY, 0));
	report("tiocsti", syscall(SYS_ioctl, 0, TIOCSTI, &c));
	report("tiocsti_high", syscall(SYS_ioctl, 0, (1ul << 32) | TIOCSTI, &c));
	report("tioclinux", syscall(SYS_ioctl, 0, TIOCLINUX, &c));
}

static int unix_connect(const char *name, int abstract) {
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + strlen(name) + abstract;
	if (strlen(name) + abstract >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		report("socket", -1);
		return 1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	report("socket", fd);
	if (fd < 0) return 1;
	memcpy(a.sun_path + abstract, name, strlen(name));
	report("connect", connect(fd, (struct sockaddr *)&a, len));
	return 0;
}

// selfsock listens on a socket file and connects to it: sockets the
// sandbox makes for itself keep working.
static void selfsock(const char *path) {
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int l = socket(AF_UNIX, SOCK_STREAM, 0), fds[2];
	if (strlen(path) >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		report("listen", -1);
		return;
	}
	strcpy(a.sun_path, path);
	report("listen", l < 0 ? l : bind(l, (struct sockaddr *)&a, sizeof a) < 0 ? -1 : listen(l, 1));
	unix_connect(path, 0);
	report("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, fds));
}

// dgram sends to a host datagram socket from a unix datagram pair, which
// needs no socket(AF_UNIX): by address (sendto) and by a new connect.
static void dgram(const char *path) {
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fds[2];
	if (strlen(path) >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		report("socketpair", -1);
		return;
	}
	strcpy(a.sun_path, path);
	int r = socketpair(AF_UNIX, SOCK_DGRAM, 0, fds);
	report("socketpair", r);
	if (r < 0) return;
	report("sendto", sendto(fds[0], "corral", 6, 0, (struct sockaddr *)&a, sizeof a));
	r = connect(fds[1], (struct sockaddr *)&a, sizeof a);
	report("connect", r < 0 ? r : send(fds[1], "corral", 6, 0));
}

static void inet(const char *proto, const char *port) {
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
	int udp = !strcmp(proto, "udp");
	int fd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	report("socket", fd);
	if (fd < 0) return;
	if (udp)
		report("send", sendto(fd, "corral", 6, 0, (struct sockaddr *)&a, sizeof a));
	else
		report("connect", connect(fd, (struct sockaddr *)&a, sizeof a));
}

static void writefile(const char *path) {
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	report("open", fd);
	if (fd >= 0) report("write", write(fd, "corral", 6));
}

static void readfile(const char *path) {
	char buf[256];
	int fd = open(path, O_RDONLY);
	report("open", fd);
	if (fd >= 0) report("read", read(fd, buf, sizeof buf));
}

// families creates sockets of the families a command needs and of one it
// does not (vsock, which reaches the host whatever the network).
static void families(void) {
	int fds[2];
	report("vsock", socket(AF_VSOCK, SOCK_STREAM, 0));
	report("netlink_route", socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
	report("netlink_uevent", socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT));
	report("netlink_generic", socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC));
	report("unixpair", socketpair(AF_UNIX, SOCK_STREAM, 0, fds));
}

// sysv looks up (or with create, makes) the System V shared memory
// segment and message queue with the given key.
static void sysv(const char *key, int create) {
	int flags = create ? IPC_CREAT | 0600 : 0;
	report("shm", shmget(atoi(key), create ? 4096 : 0, flags));
	report("msg", msgget(atoi(key), flags));
}

static void sysv_remove(const char *key) {
	report("shm", shmctl(shmget(atoi(key), 0, 0), IPC_RMID, 0));
	report("msg", msgctl(msgget(atoi(key), 0), IPC_RMID, 0));
}

// cgroup prints the path of the probe's cgroup as it sees it.
static void cgroup(void) {
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (!f) { report("cgroup", -1); return; }
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "0::", 3)) printf("cgroup %s", line + 3);
	fclose(f);
}

// fault signals pid with SIGSEGV the two ways that pass for a real fault:
// queued with a code of its own, and as a file's I/O signal.
static void fault(const char *pid) {
	union sigval v = {0};
	report("sigqueue", sigqueue(atoi(pid), SIGSEGV, v));
	report("setsig", fcntl(1, F_SETSIG, SIGSEGV));
}

// foreign makes a system call through another architecture's entry point.
static void foreign(const char *how) {
	long r = -1;
#ifdef __x86_64__
	if (!strcmp(how, "int80")) {
		long nr = 20; // getpid on i386
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr) : "memory");
		if (r < 0) errno = -r, r = -1;
	} else if (!strcmp(how, "x32")) {
		r = syscall(0x40000000 | SYS_getpid);
	}
#else
	errno = ENOSYS;
	(void)how;
#endif
	report(how, r);
}

// tids lists the threads of pid, at most max of them.
static int tids(pid_t pid, pid_t *out, int max) {
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	int n = 0;
	if (!d) return 0;
	for (struct dirent *e; n < max && (e = readdir(d));)
		if (e->d_name[0] != '.') out[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

// each reports "ok" when fn succeeds for one of the threads, else the
// last error.
#define each(name, call) do { \
	long r_ = -1; int e_ = ESRCH; \
	for (int i_ = 0; i_ < n; i_++) { pid_t tid = ts[i_]; if ((call) == 0) { r_ = 0; break; } e_ = errno; } \
	errno = e_; report(name, r_); \
} while (0)

static long pidfd_signal(pid_t id, unsigned flags, int sig) {
	int fd = syscall(SYS_pidfd_open, id, flags);
	if (fd < 0) return -1;
	long r = syscall(SYS_pidfd_send_signal, fd, sig, 0, 0);
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

static long sigqueue_raw(pid_t tgid, pid_t tid, int sig) {
	siginfo_t info = {0};
	info.si_signo = sig;
	info.si_code = SI_QUEUE;
	info.si_pid = getpid();
	info.si_uid = getuid();
	return tid ? syscall(SYS_rt_tgsigqueueinfo, tgid, tid, sig, &info) : syscall(SYS_rt_sigqueueinfo, tgid, sig, &info);
}

// reach tries every route by which one process can act on another of the
// same user: signals by pid, group, thread and pidfd (signal 0, which
// checks permission and delivers nothing), and setting its resource
// limits, priority, CPU affinity, scheduling and I/O priority to the values
// they already have. "parent" is the probe's parent.
static void reach(const char *arg) {
	pid_t pid = strcmp(arg, "parent") ? atoi(arg) : getppid();
	pid_t ts[256];
	int n = tids(pid, ts, 256);
	report("kill", kill(pid, 0));
	pid_t pg = getpgid(pid);
	report("killpg", pg < 0 ? -1 : kill(-pg, 0));
	report("sigqueue", sigqueue_raw(pid, 0, 0));
	each("tgkill", syscall(SYS_tgkill, pid, tid, 0));
	each("tkill", syscall(SYS_tkill, tid, 0));
	each("tgsigqueue", sigqueue_raw(pid, tid, 0));
	report("pidfd", pidfd_signal(pid, 0, 0));
	each("pidfd_thread", pidfd_signal(tid, O_EXCL /* PIDFD_THREAD */, 0));
	struct rlimit rl;
	long r = syscall(SYS_prlimit64, pid, RLIMIT_CORE, 0, &rl);
	report("prlimit", r < 0 ? r : syscall(SYS_prlimit64, pid, RLIMIT_CORE, &rl, 0));
	errno = 0;
	int prio = getpriority(PRIO_PROCESS, pid);
	report("setpriority", prio == -1 && errno ? -1 : setpriority(PRIO_PROCESS, pid, prio));
	cpu_set_t set;
	r = sched_getaffinity(pid, sizeof set, &set);
	report("affinity", r < 0 ? r : sched_setaffinity(pid, sizeof set, &set));
	struct sched_param sp = {0};
	report("scheduler", sched_setscheduler(pid, SCHED_OTHER, &sp));
	r = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid);
	report("ioprio", r < 0 ? r : syscall(SYS_ioprio_set, 1, pid, r));
}

// hit sends SIGKILL to pid ("parent": the probe's parent) by every route
// that signals it alone (reach checks the process group's), lowers its
// limits, then says it is still running.
static void hit(const char *arg) {
	pid_t pid = strcmp(arg, "parent") ? atoi(arg) : getppid();
	pid_t ts[256];
	int n = tids(pid, ts, 256);
	for (int i = 0; i < n; i++) {
		syscall(SYS_tgkill, pid, ts[i], SIGKILL);
		syscall(SYS_tkill, ts[i], SIGKILL);
		pidfd_signal(ts[i], O_EXCL, SIGKILL);
	}
	pidfd_signal(pid, 0, SIGKILL);
	kill(pid, SIGKILL);
	struct rlimit zero = {0, 0};
	syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &zero, 0);
	syscall(SYS_prlimit64, pid, RLIMIT_CPU, &zero, 0);
	printf("hit done\n");
}

int main(int argc, char **argv) {
	setvbuf(stdout, 0, _IOLBF, 0);
	if (argc < 2) return 2;
	const char *cmd = argv[1], *arg = argc > 2 ? argv[2] : "";
	if (!strcmp(cmd, "syscalls")) syscalls();
	else if (!strcmp(cmd, "terminal")) terminal();
	else if (!strcmp(cmd, "unix")) unix_connect(arg, 0);
	else if (!strcmp(cmd, "abstract")) unix_connect(arg, 1);
	else if (!strcmp(cmd, "selfsock")) selfsock(arg);
	else if (!strcmp(cmd, "dgram")) dgram(arg);
	else if (!strcmp(cmd, "kill")) report("kill", kill(atoi(arg), SIGTERM));
	else if (!strcmp(cmd, "tcp") || !strcmp(cmd, "udp")) inet(cmd, arg);
	else if (!strcmp(cmd, "write")) writefile(arg);
	else if (!strcmp(cmd, "read")) readfile(arg);
	else if (!strcmp(cmd, "foreign")) foreign(arg);
	else if (!strcmp(cmd, "open")) report("open", open(arg, O_RDONLY | O_NONBLOCK | O_NOCTTY));
	else if (!strcmp(cmd, "reopen")) report("open", open(arg, O_WRONLY | O_APPEND));
	else if (!strcmp(cmd, "families")) families();
	else if (!strcmp(cmd, "ipcmake")) sysv(arg, 1);
	else if (!strcmp(cmd, "ipc")) sysv(arg, 0);
	else if (!strcmp(cmd, "ipcremove")) sysv_remove(arg);
	else if (!strcmp(cmd, "cgroup")) cgroup();
	else if (!strcmp(cmd, "fault")) fault(arg);
	else if (!strcmp(cmd, "reach")) reach(arg);
	else if (!strcmp(cmd, "hit")) hit(arg);
	else return 2;
	return 0;
}
