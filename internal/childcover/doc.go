// Package childcover adds the coverage of a test binary's re-executed
// copies (a sandbox's spawner and init) to the coverage of the test, when
// the binary is built with -cover.
//
// A test binary built with -cover writes its counters at exit into the
// directory GOCOVERDIR names, and `go test -cover` counts every file it
// finds in the test's coverage directory. The re-executed copies would not
// get there on their own: they start with an empty environment, and an
// init runs in a mount tree of its own where the host's directory is not
// to be seen. So a copy looks up its test's coverage directory among its
// ancestors (the -test.gocoverdir flag `go test` passes the test binary,
// else a GOCOVERDIR in an ancestor's environment) before it builds
// anything, opens it, and points its own GOCOVERDIR at that descriptor
// (/proc/self/fd/N), which keeps naming the directory whatever the mount
// tree becomes. It exits from a goroutine of its own rather than from the
// init's main thread, which runs under the command's seccomp filter by
// then.
//
// Not collected: a copy killed by SIGKILL (a sandbox killed from outside,
// a spawner when its test binary exits) writes nothing, and neither does
// an init confined by Landlock, which allows it no write to the directory.
package childcover
