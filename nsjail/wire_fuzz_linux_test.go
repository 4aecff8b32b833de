package nsjail

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzWire decodes bytes as each message of the protocol, in both
// directions (the caller's set-up, exec and control messages to the init;
// the init's replies, the spawner's answers and hellos back): nothing
// panics, and a message that decodes re-encodes to the very same bytes,
// so that no two encodings mean one message and nothing is dropped.
func FuzzWire(f *testing.F) {
	types := protocolTypes()
	for i, msg := range types {
		n := i
		v := reflect.New(reflect.TypeOf(msg))
		fill(v.Elem(), &n)
		b, err := marshal(v.Interface())
		require.NoError(f, err)
		f.Add(uint8(i), b)
		zero, err := marshal(msg)
		require.NoError(f, err)
		f.Add(uint8(i), zero)
	}
	var s setup
	s.Paths.Sources = map[string]string{"/a": "/b", "/c": "/d", "": "/e"}
	b, err := marshal(s)
	require.NoError(f, err)
	f.Add(uint8(3), b)
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		typ := reflect.TypeOf(types[int(kind)%len(types)])
		v := reflect.New(typ)
		if err := unmarshal(data, v.Interface()); err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		again, err := marshal(v.Interface())
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, again), "%s: %x decodes, and re-encodes as %x", typ, data, again)
	})
}
