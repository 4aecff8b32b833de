package integration

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// syscallProbes are commands the seccomp filter refuses a call of, with
// the call (a socket's with its family), the errno's message the command must still see, and the rule
// the report gives. Each succeeds outside the sandbox.
var syscallProbes = []struct {
	name, script, call, message, rule string
}{
	{"unshare", "unshare -U true", "unshare", "Operation not permitted",
		"system call filter, EPERM: a new namespace hands the command a fresh set of capabilities"},
	{"generic netlink", `/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)'`,
		"socket(AF_NETLINK)", "Protocol not supported",
		"system call filter, EPROTONOSUPPORT: a netlink protocol no command needs: only route (addresses, links) is allowed"},
}

// A call the seccomp filter refuses is listed by name with its errno, and
// the command still gets the filter's own errno; with reporting off it is
// refused alike and nothing is listed. A call refused with ENOSYS (clone3,
// which libc's posix_spawn tries first) stands for a call the kernel lacks
// and is not listed. Each probe succeeds without the sandbox.
func TestReportRefusedSyscalls(t *testing.T) {
	for _, p := range syscallProbes {
		out, err := exec.Command("sh", "-c", p.script).CombinedOutput()
		require.NoError(t, err, "control %s: %s", p.name, out)
	}
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			s := newReportScene(t)
			sb, _ := rungSandbox(t, rung, s.config())
			off := s.config()
			off.Report = false
			sbOff, _ := rungSandbox(t, rung, off)
			for _, p := range syscallProbes {
				for _, on := range []bool{true, false} {
					box := sb
					if !on {
						box = sbOff
					}
					c := box.Command(context.Background(), "sh", "-c", p.script)
					out, err := c.CombinedOutput()
					require.Error(t, err, "%s refused: %s", p.name, out)
					assert.Contains(t, string(out), p.message, p.name)
					v := findViolation(c.Report(), corral.ViolationSyscall, p.call)
					if !on {
						assert.Nil(t, v, "%s: reporting off", p.name)
						continue
					}
					require.NotNil(t, v, "%s: %+v", p.name, c.Report())
					assert.Equal(t, p.rule, v.Rule)
					assert.Equal(t, 1, v.Count)
					assert.NotEmpty(t, v.Process)
				}
			}

			c := sb.Command(context.Background(), "/usr/bin/python3", "-c",
				`import os; pid = os.posix_spawn("/bin/true", ["true"], {}); print(os.waitpid(pid, 0)[1])`)
			out, err := c.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Equal(t, "0", strings.TrimSpace(string(out)))
			assert.Nil(t, findViolation(c.Report(), corral.ViolationSyscall, "clone3"), "%+v", c.Report())
		})
	}
}
