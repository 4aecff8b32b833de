package egress

import (
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Forward relays both ways, and once closed nothing listens and the
// connections it carried are ended.
func TestForward(t *testing.T) {
	echo := echoServer(t)
	f := NewForward()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- f.Serve(l, func(net.Conn) (net.Conn, error) { return directDial(echo) }, nil) }()

	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("ping"))
	require.NoError(t, err)
	got := make([]byte, 4)
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, "ping", string(got))

	require.NoError(t, f.Close())
	assert.ErrorIs(t, <-served, ErrForwardClosed)
	_, err = c.Read(got)
	assert.Error(t, err, "the relayed connection ends with the Forward")
	_, err = net.Dial("tcp", l.Addr().String())
	assert.Error(t, err, "nothing listens once closed")
}

// A connection the dial cannot make for is closed, and onFail says why.
func TestForwardDialFails(t *testing.T) {
	f := NewForward()
	defer f.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	failed := make(chan error, 1)
	go f.Serve(l, func(net.Conn) (net.Conn, error) { return nil, io.ErrUnexpectedEOF }, func(err error) { failed <- err })
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	assert.ErrorIs(t, <-failed, io.ErrUnexpectedEOF)
	_, err = c.Read(make([]byte, 1))
	assert.Error(t, err)
}
