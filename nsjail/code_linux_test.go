package nsjail

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/lookpath"
)

// TestFailureCodeCrossesTheSocket: the caller tells a missing command from
// one it cannot execute by the failure's code, whatever its text says.
func TestFailureCodeCrossesTheSocket(t *testing.T) {
	cases := []struct {
		name string
		f    *failure
		is   error // the error the caller gets wraps this
		not  error // and not this
	}{
		{"lookpath not found", execFailure("x", lookpath.ErrNotFound), lookpath.ErrNotFound, lookpath.ErrNotExecutable},
		{"execve ENOENT", execFailure("x", &fs.PathError{Op: "fork/exec", Path: "/x", Err: unix.ENOENT}), lookpath.ErrNotFound, lookpath.ErrNotExecutable},
		{"lookpath not executable", execFailure("x", lookpath.ErrNotExecutable), lookpath.ErrNotExecutable, lookpath.ErrNotFound},
		{"execve ENOEXEC", execFailure("x", unix.ENOEXEC), lookpath.ErrNotExecutable, lookpath.ErrNotFound},
		{"execve EISDIR", execFailure("x", unix.EISDIR), lookpath.ErrNotExecutable, lookpath.ErrNotFound},
		{"code with any text", &failure{Layer: LayerExec, Msg: "something else entirely", Code: codeNotFound}, lookpath.ErrNotFound, lookpath.ErrNotExecutable},
		{"the text without the code", &failure{Layer: LayerExec, Msg: lookpath.ErrNotFound.Error()}, nil, lookpath.ErrNotFound},
		{"other exec failure", execFailure("x", unix.E2BIG), unix.E2BIG, lookpath.ErrNotFound},
		{"workdir", failureOf(LayerWorkdir, "/w", fmt.Errorf("stat: %w", unix.ENOENT)), fs.ErrNotExist, lookpath.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := marshal(reply{Fail: c.f})
			require.NoError(t, err)
			var r reply
			require.NoError(t, unmarshal(b, &r))
			require.NotNil(t, r.Fail)
			err = r.Fail.err()
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, c.f.Layer, e.Layer)
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
			assert.False(t, errors.Is(err, c.not), "must not wrap %v", c.not)
		})
	}
}
