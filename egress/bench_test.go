package egress

import (
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The benchmarks compare the proxy with a direct connection to the same
// loopback server; scripts/bench-egress.sh turns them into the ratios
// `make bench` checks. Client, proxy and server share this process.

// benchProxy serves a proxy that allows bench.example on loopback.
func benchProxy(b *testing.B) *running {
	return startProxy(b, Options{
		Rules:   mustRules(b, []string{"bench.example"}, nil, loopback),
		Resolve: mapResolver{"bench.example": {"127.0.0.1"}}.resolve,
	})
}

// dialer opens a connection to the server on port, directly or through
// the proxy, ready to carry bytes.
type dialer func(port int) (net.Conn, error)

func directDial(port int) (net.Conn, error) {
	return net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

func (r *running) connectDial(port int) (net.Conn, error) {
	c, err := net.Dial("tcp", r.httpAddr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "CONNECT bench.example:%d HTTP/1.1\r\nHost: bench.example:%d\r\n\r\n", port, port)
	// Read the answer without buffering past it: it is exactly this line
	// and an empty one.
	want := "HTTP/1.1 200 Connection established\r\n\r\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		c.Close()
		return nil, fmt.Errorf("CONNECT: %q, %v", got, err)
	}
	return c, nil
}

func (r *running) socks5Dial(port int) (net.Conn, error) {
	return r.socksDial(fmt.Sprintf("bench.example:%d", port))
}

// BenchmarkSetup times making a connection and one byte's round trip
// through it, and reports the median.
func BenchmarkSetup(b *testing.B) {
	echo := echoServer(b)
	p := benchProxy(b)
	for _, bb := range []struct {
		name string
		dial dialer
	}{{"direct", directDial}, {"connect", p.connectDial}, {"socks5", p.socks5Dial}} {
		b.Run(bb.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			one := []byte{'x'}
			for b.Loop() {
				start := time.Now()
				c, err := bb.dial(echo)
				require.NoError(b, err)
				_, err = c.Write(one)
				require.NoError(b, err)
				_, err = io.ReadFull(c, one)
				require.NoError(b, err)
				times = append(times, time.Since(start))
				c.Close()
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(times[len(times)*9/10].Nanoseconds())/1e3, "p90-µs")
		})
	}
}

// sourceServer sends size bytes on every connection, then closes it.
func sourceServer(b *testing.B, size int64) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	var wg sync.WaitGroup
	b.Cleanup(func() { l.Close(); wg.Wait() })
	buf := make([]byte, 1<<20)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				for left := size; left > 0; {
					n, err := c.Write(buf[:min(left, int64(len(buf)))])
					if err != nil {
						return
					}
					left -= int64(n)
				}
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// drain reads c to its end and returns how many bytes came.
func drain(c net.Conn, buf []byte) (int64, error) {
	var total int64
	for {
		n, err := c.Read(buf)
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// transfer runs conns connections at once, each receiving per bytes from
// a source server, b.N times, and reports the process's CPU per byte.
func transfer(b *testing.B, dial dialer, conns int, per int64) {
	port := sourceServer(b, per)
	b.SetBytes(per * int64(conns))
	cpu := cpuTime()
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := dial(port)
				if err != nil {
					errs <- err
					return
				}
				defer c.Close()
				n, err := drain(c, make([]byte, 256<<10))
				if err == nil && n != per {
					err = fmt.Errorf("got %d bytes of %d", n, per)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(b, err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(int64(b.N)*per*int64(conns)), "cpu-ns/B")
}

// BenchmarkThroughput moves 1 GiB over one connection.
func BenchmarkThroughput(b *testing.B) {
	p := benchProxy(b)
	for _, bb := range []struct {
		name string
		dial dialer
	}{{"direct", directDial}, {"connect", p.connectDial}} {
		b.Run(bb.name, func(b *testing.B) { transfer(b, bb.dial, 1, 1<<30) })
	}
}

// BenchmarkConcurrent64 moves 1 GiB over 64 connections at once.
func BenchmarkConcurrent64(b *testing.B) {
	p := benchProxy(b)
	for _, bb := range []struct {
		name string
		dial dialer
	}{{"direct", directDial}, {"connect", p.connectDial}} {
		b.Run(bb.name, func(b *testing.B) { transfer(b, bb.dial, 64, 16<<20) })
	}
}

// BenchmarkForward moves 1 GiB over one connection directly and through a
// Forward, the relay of a sandbox's published ports and host ports
// (accepted on one loopback socket, dialled on another, spliced).
func BenchmarkForward(b *testing.B) {
	b.Run("direct", func(b *testing.B) { transfer(b, directDial, 1, 1<<30) })
	b.Run("forward", func(b *testing.B) {
		f := NewForward()
		b.Cleanup(func() { f.Close() })
		ports := map[int]int{} // the source's port: the Forward's
		dial := func(port int) (net.Conn, error) {
			if _, ok := ports[port]; !ok {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					return nil, err
				}
				go f.Serve(l, func(net.Conn) (net.Conn, error) { return directDial(port) }, nil)
				ports[port] = l.Addr().(*net.TCPAddr).Port
			}
			return directDial(ports[port])
		}
		transfer(b, dial, 1, 1<<30)
	})
}
