package seccomp

import "golang.org/x/sys/unix"

const notifyArch = unix.AUDIT_ARCH_X86_64

// legacyWriteCalls are the path calls amd64 keeps beside their *at forms.
var legacyWriteCalls = map[uint32]WriteCall{
	unix.SYS_OPEN:     {"open", []PathArg{{-1, 0}}, 1},
	unix.SYS_CREAT:    {"creat", []PathArg{{-1, 0}}, -1},
	unix.SYS_MKDIR:    {"mkdir", []PathArg{{-1, 0}}, -1},
	unix.SYS_MKNOD:    {"mknod", []PathArg{{-1, 0}}, -1},
	unix.SYS_RMDIR:    {"rmdir", []PathArg{{-1, 0}}, -1},
	unix.SYS_UNLINK:   {"unlink", []PathArg{{-1, 0}}, -1},
	unix.SYS_RENAME:   {"rename", []PathArg{{-1, 0}, {-1, 1}}, -1},
	unix.SYS_RENAMEAT: {"renameat", []PathArg{{0, 1}, {2, 3}}, -1},
	unix.SYS_LINK:     {"link", []PathArg{{-1, 1}}, -1},
	unix.SYS_SYMLINK:  {"symlink", []PathArg{{-1, 1}}, -1},
	unix.SYS_CHMOD:    {"chmod", []PathArg{{-1, 0}}, -1},
	unix.SYS_CHOWN:    {"chown", []PathArg{{-1, 0}}, -1},
	unix.SYS_LCHOWN:   {"lchown", []PathArg{{-1, 0}}, -1},
}
