//go:build !linux

package landlock

// ABI returns 0: Landlock is Linux only.
func ABI() int { return 0 }

// Why explains why Landlock is missing.
func Why() string { return "Landlock is Linux only" }
