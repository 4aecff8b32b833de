// Package bench measures what spawning a sandbox costs a caller: the latency
// of starting sandboxed /bin/true through the library, spawns per second at a
// given parallelism, the init's peak memory, and the same figures for
// bubblewrap started from the same process, for comparison.
//
// It backs `corral bench` and the benchmarks of `go test -bench`. Everything
// goes through the public API ([corral.New], [corral.Sandbox.Command]), so it
// measures what an agent linking the library would feel, including any
// helper processes the library keeps.
//
// # Method
//
// Latency runs are sequential; with bubblewrap they alternate, one corral
// spawn then one bubblewrap spawn, so drift in the machine's load affects
// both alike. A spawn is timed from creating the command to Wait returning.
// One spawn of each kind runs first, untimed, so starting the library's
// helper process is not counted. Percentiles use the nearest-rank method.
//
// The init's peak RSS is the VmHWM line of /proc/PID/status on the host,
// where PID is Cmd.Process (the sandbox's init), read while a sandboxed
// command blocks on its standard input, that is after the init has built the
// sandbox and started the command. The largest of a few samples is reported.
//
// The MCP case (Options.VsMCP) starts corral-mcp as an agent's client does
// and speaks newline-delimited JSON-RPC to it over its standard input and
// output, with the few lines of JSON a call needs rather than an SDK's
// client, so the figure is the server's: a shell call of `true` from the
// request written to the result read, alternating with library spawns on
// a sandbox of the same workspace. Before each call the client waits
// 20 ms, untimed, for the server's sandbox to build its next init ahead, as
// Sandbox.Warm lets the library's spawns do; each library spawn waits as
// long after its Warm, so that neither kind is timed while the other's
// process builds its next init.
//
// # Limitations
//
// The parent heap is one large byte slice with every page touched: it has the
// page tables of a large agent but not its pointer graph, so garbage
// collection costs are not represented.
package bench
