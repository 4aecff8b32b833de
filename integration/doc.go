// Package integration spawns real sandboxes and attacks them.
//
// Every attack runs twice: once without the sandbox, where it must succeed
// (proving the probe can detect an escape), and once inside, where it must
// fail. Success is judged on the host (a file that appeared, a process that
// died), never by what the sandboxed command says about itself.
//
// The suite runs as whatever user invokes it; `make test` runs it as root and
// again as an unprivileged user.
package integration
