//go:build unix

package heldwrite

import "syscall"

// nonblock: a FIFO put in the file's place does not hold up the write.
const nonblock = syscall.O_NONBLOCK
