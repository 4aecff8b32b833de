package limits

import "golang.org/x/sys/unix"

// writable reports whether the calling process may make cgroups in dir.
func writable(dir string) bool { return unix.Access(dir, unix.W_OK|unix.X_OK) == nil }
