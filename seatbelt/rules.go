package seatbelt

// The fixed parts of every profile. They hold no configured value: paths
// come in only through parameters (see files.go and network.go).

const header = `(version 1)
(deny default)
`

// Processes may start others and see or signal only their own sandbox:
// never the caller, another sandbox or any other process of the user.
const processRules = `
; Processes: exec and fork; signals and process information only within
; this sandbox.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
`

// systemRules are the sysctls, Mach services and IPC that ordinary
// command-line tools (shells, compilers, language runtimes, git) touch.
// Sysctls are an allow-list because others (kern.procargs2, kern.proc.all)
// would show the environment and arguments of the user's other processes.
const systemRules = `
; System information: hardware and OS identification only. Process tables
; and other processes' arguments and environment (kern.proc.*,
; kern.procargs*) stay denied.
(allow sysctl-read
  (sysctl-name-prefix "hw.")
  (sysctl-name-prefix "machdep.cpu.")
  (sysctl-name "machdep.ptrauth_enabled")
  (sysctl-name "kern.argmax")
  (sysctl-name "kern.boottime")
  (sysctl-name "kern.clockrate")
  (sysctl-name "kern.hostname")
  (sysctl-name "kern.hv_support")
  (sysctl-name "kern.maxfiles")
  (sysctl-name "kern.maxfilesperproc")
  (sysctl-name "kern.maxproc")
  (sysctl-name "kern.maxprocperuid")
  (sysctl-name "kern.ngroups")
  (sysctl-name "kern.osproductversion")
  (sysctl-name "kern.osproductversioncompat")
  (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype")
  (sysctl-name "kern.osvariant_status")
  (sysctl-name "kern.osversion")
  (sysctl-name "kern.secure_kernel")
  (sysctl-name "kern.tcsm_available")
  (sysctl-name "kern.tcsm_enable")
  (sysctl-name "kern.usrstack64")
  (sysctl-name "kern.version")
  (sysctl-name "security.mac.lockdown_mode_state")
  (sysctl-name "sysctl.proc_cputype")
  (sysctl-name "sysctl.proc_native")
  (sysctl-name "sysctl.proc_translated")
  (sysctl-name "vm.loadavg"))
; Java reads its CPU type through a sysctl write.
(allow sysctl-write (sysctl-name "kern.grade_cputype"))
; Processor information (Node's os.cpus()); setting host ports needs root.
(allow mach-host*)

; Mach services: user and group lookups, notifications, logging,
; preferences (read only) and the per-user directories.
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership")
  (global-name "com.apple.system.DirectoryService.libinfo_v1")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd")
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent"))
(allow user-preference-read)

; IPC: POSIX semaphores (Python multiprocessing) and the notification
; center's read-only shared memory. Other POSIX shared memory is a
; user-wide namespace and stays denied.
(allow ipc-posix-sem)
(allow ipc-posix-shm-read* (ipc-posix-name "apple.shm.notification_center"))
`

// deviceRules make /dev/null and terminals writable. Reading them is
// covered by the general file-read rule.
const deviceRules = `
; Devices: the null, zero and DTrace helper devices, terminals and new
; pseudo-terminals, and /dev/fd (a descriptor the command already holds).
(allow file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/dtracehelper")
  (literal "/dev/tty")
  (literal "/dev/ptmx")
  (regex #"^/dev/ttys[0-9]+$"))
(allow file-write-data (subpath "/dev/fd"))
(allow pseudo-tty)
`

// readRule comes before every path rule, so hidden paths (denied later)
// override it.
const readRule = `
; Files: everything is readable except hidden paths (below). Hard links and
; clones (file-link, file-clone) stay denied: either would give a protected
; or hidden file a second name outside its rule.
(allow file-read*)
`

// Host networking: IP anywhere, and the one host unix socket getaddrinfo
// needs. Mach services for DNS configuration and TLS trust evaluation.
const hostNetworkRules = `
; Network: host. Any IP traffic; of the host's unix sockets only the DNS
; resolver's.
(allow system-socket)
(allow network-outbound (remote ip "*:*"))
(allow network-bind network-inbound (local ip "*:*"))
(allow network-outbound
  (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))
(allow sysctl-read (sysctl-name-prefix "net.routetable."))
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.networkd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.ocspd"))
`

const proxyNetworkRules = `
; Network: allow. IP only to the ports of corral's proxy on localhost, which
; the caller serves and which reaches only the allowed names; no DNS (the
; proxy resolves names), no other host, no UDP.
(allow system-socket (socket-domain AF_UNIX))
(allow system-socket (socket-domain AF_INET))
`

const noNetworkRules = `
; Network: none. No IP at all, loopback included (it is the host's); unix
; sockets only as allowed below.
(allow system-socket (socket-domain AF_UNIX))
`
