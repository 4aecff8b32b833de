package childcover

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCoverDirOf(t *testing.T) {
	cwd := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"flag", []string{"-test.gocoverdir=/a", "-test.v"}, []string{"GOCOVERDIR=/b"}, "/a"},
		{"last flag wins", []string{"-test.gocoverdir=/a", "--test.gocoverdir", "/c"}, nil, "/c"},
		{"environment", []string{"-test.v"}, []string{"X=1", "GOCOVERDIR=/b"}, "/b"},
		{"relative", []string{"-test.gocoverdir=d"}, nil, filepath.Join(cwd, "d")},
		{"none", []string{"-test.v"}, []string{"X=1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// sh keeps its arguments in its command line, unread, says
			// when it runs (the kernel sets the command line after the
			// exec that Start waits for) and waits for its input to end.
			cmd := exec.Command("/bin/sh", append([]string{"-c", "echo; read x", "sh"}, tc.args...)...)
			cmd.Env, cmd.Dir = tc.env, cwd
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			defer func() { in.Close(); cmd.Wait() }()
			_, err = out.Read(make([]byte, 1))
			require.NoError(t, err)
			assert.Equal(t, tc.want, coverDirOf(cmd.Process.Pid))
		})
	}
}

func TestParent(t *testing.T) {
	assert.Equal(t, os.Getppid(), parent(os.Getpid()))
	assert.Zero(t, parent(-1))
	self, err := os.Readlink("/proc/self")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid()), self)
}
