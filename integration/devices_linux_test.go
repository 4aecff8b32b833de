package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sandbox's /dev holds the few devices programs need and the usual
// links, a devpts of its own and an empty /dev/shm of its own.
func TestMinimalDev(t *testing.T) {
	w := newWorld(t)
	r := w.sandboxed(w.config(), `ls -A /dev | tr '\n' ' '; echo
		echo x > /dev/null && echo x > /dev/full 2>/dev/null; echo "full $?"
		head -c 8 /dev/zero | wc -c; head -c 8 /dev/urandom | wc -c; head -c 8 /dev/random | wc -c
		readlink /dev/fd /dev/stdin /dev/stdout /dev/stderr /dev/ptmx | tr '\n' ' '; echo
		ls -A /dev/pts | tr '\n' ' '; echo
		echo shared > /dev/shm/mine && cat /dev/shm/mine`)
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, strings.Join([]string{
		"fd full null ptmx pts random shm stderr stdin stdout tty urandom zero ",
		"full 1",
		"8", "8", "8",
		"/proc/self/fd /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 pts/ptmx ",
		"ptmx ",
		"shared",
	}, "\n")+"\n", r.stdout)
}

// Neither the host's terminals nor its shared memory show through.
func TestHostDevicesStayOutside(t *testing.T) {
	_, slave := openPty(t)
	shm := fmt.Sprintf("/dev/shm/corral-probe-%d", rand.Uint64())
	require.NoError(t, os.WriteFile(shm, []byte("host"), 0o644))
	t.Cleanup(func() { os.Remove(shm) })
	script := `test -e "$PTY" && echo pty; cat "$SHM" 2>/dev/null && echo; ls /dev/shm | grep -c corral-probe-`
	extra := []string{"PTY=" + slave.Name(), "SHM=" + shm}

	bare := newWorld(t)
	bare.vars = append(bare.vars, extra...)
	r := bare.bare(script)
	require.Equal(t, "pty\nhost\n1\n", r.stdout, "the probe must work without the sandbox:\n%s", r)

	boxed := newWorld(t)
	boxed.vars = append(boxed.vars, extra...)
	r = boxed.sandboxed(boxed.config(), script)
	assert.Equal(t, "0\n", r.stdout, "%s", r)
}
