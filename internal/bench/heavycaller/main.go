// Command heavycaller is `corral bench --json` in a program whose package
// initialisation is heavy, as an agent's is when it links large SDKs, gRPC
// or protobuf registries: its init() touches 64 MiB and spends 30 ms of CPU
// before main. `make bench` runs it with and without a helper (-helper, the
// corral CLI binary) to show what each sandbox pays for the caller's own
// start-up when the inits are the caller's binary.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/bench"
)

// The weight of the caller's package initialisation.
const (
	initMemory = 64 << 20
	initCPU    = 30 * time.Millisecond
)

var ballast []byte

func init() {
	ballast = make([]byte, initMemory)
	for i := 0; i < len(ballast); i += os.Getpagesize() {
		ballast[i] = 1
	}
	start := cpuTime()
	for cpuTime()-start < initCPU {
	}
}

// cpuTime is the CPU time this process has used: a loaded machine makes
// the spin last longer, not cost more.
func cpuTime() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func main() {
	if corral.Init() {
		return
	}
	var o bench.Options
	flag.IntVar(&o.Runs, "runs", 200, "spawn `N` times for each measurement")
	flag.IntVar(&o.Parallel, "parallel", 1, "spawns per second with `P` spawning at once")
	flag.BoolVar(&o.VsBwrap, "vs-bwrap", false, "also measure bubblewrap")
	flag.StringVar(&o.Helper, "helper", "", "run the inits from the corral binary at `PATH`")
	flag.Parse()
	r, err := bench.Run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heavycaller:", err)
		os.Exit(1)
	}
	r.WriteJSON(os.Stdout)
	_ = ballast[0]
}
