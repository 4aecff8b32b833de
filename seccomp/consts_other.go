//go:build !linux

package seccomp

// Linux's generic values, so the policy can be printed on other systems.
const (
	tiocsti        = 0x5412
	tioclinux      = 0x541c
	sigIll         = 4
	sigTrap        = 5
	sigBus         = 7
	sigFpe         = 8
	sigSegv        = 11
	sigStkflt      = 16
	sigSys         = 31
	fSetsig        = 10
	afUnix         = 1
	afInet         = 2
	afNetlink      = 16
	afInet6        = 10
	sockDgram      = 2
	sockStream     = 1
	ipprotoTCP     = 6
	cloneNewNS     = 0x0002_0000
	cloneNewCgroup = 0x0200_0000
	cloneNewUTS    = 0x0400_0000
	cloneNewIPC    = 0x0800_0000
	cloneNewUser   = 0x1000_0000
	cloneNewPID    = 0x2000_0000
	cloneNewNet    = 0x4000_0000
)
