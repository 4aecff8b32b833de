//go:build unix

package agent

import "syscall"

const noFollow = syscall.O_NOFOLLOW
