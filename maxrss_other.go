//go:build !linux

package corral

// maxrssUnit is the unit of Rusage.Maxrss in bytes: bytes on macOS.
const maxrssUnit = 1
