package seccomp

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func TestDecodeRejectsNonPrograms(t *testing.T) {
	for _, b := range [][]byte{nil, {1, 2, 3}, make([]byte, 9)} {
		_, err := decode(b)
		require.Error(t, err, "%d bytes", len(b))
	}
	prog, err := decode([]byte{0x06, 0, 0, 0, 0, 0, 0xff, 0x7f})
	require.NoError(t, err)
	require.Len(t, prog, 1)
	require.Equal(t, uint16(6), prog[0].Code) // BPF_RET|BPF_K
}
