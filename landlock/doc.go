// Package landlock turns a sandbox's path lists into a Landlock ruleset and
// enforces it.
//
// Landlock is an unprivileged Linux security module: a process describes
// what it may do to files, TCP ports and other processes, and the kernel
// holds it and every later child to that, whatever mounts or credentials
// they have. corral uses it as a second wall behind the mount namespace in
// the full rung, and as the main wall in the landlock rung, where there are
// no namespaces at all.
//
// # Building a policy
//
// [Build] is pure: it takes the wanted access per path ([Entry]) and the
// kernel's ABI version and returns the rules, so the rule set is unit-tested
// without a kernel. It only reads directories when a path must be carved
// out of a granted tree (see Limitations).
//
//	p, err := landlock.Build(landlock.Input{
//		ABI: landlock.ABI(),
//		Entries: []landlock.Entry{
//			{Path: "/", Access: landlock.ReadOnly},
//			{Path: "/home/me/project", Access: landlock.ReadWrite},
//			{Path: "/home/me/.ssh", Access: landlock.None},
//		},
//		Scope: true,
//	}, landlock.OS())
//	...
//	runtime.LockOSThread()
//	err = landlock.Restrict(p) // this thread, and the processes it starts
//
// # Limitations
//
// Landlock rules only grant: a right given to a directory reaches everything
// beneath it. A path that must get less than its parent (a hidden path, a
// read-only path inside a writable one) is carved out: its ancestors get no
// rule of their own and each of their other entries gets the parent's rights
// instead. The ancestors therefore cannot be listed, and entries created in
// them after the policy was built get nothing. In the full rung the mount
// tree enforces those paths and no carving is needed.
//
// Files opened before [Restrict] keep the access they were opened with, and
// so do inherited standard streams.
package landlock
