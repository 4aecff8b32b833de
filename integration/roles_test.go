//go:build linux

package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
)

// roleEnv selects a helper role for a re-executed test binary: the test
// starts a copy of itself as a "caller" that it can kill.
const roleEnv = "CORRAL_TEST_ROLE"

// runRole runs a helper role and returns the exit status.
func runRole(role string) int {
	switch role {
	case "caller":
		return runCaller()
	case "submount":
		return runSubmount()
	case "connect":
		return runConnectProbe()
	case "latemount":
		return runLateMount()
	case "serve":
		return runServe()
	}
	fmt.Fprintf(os.Stderr, "unknown role %q\n", role)
	return 2
}

// runCaller starts `sleep MARK` (sandboxed, or bare when CORRAL_TEST_BARE is
// set), says "started" and waits to be killed.
func runCaller() int {
	mark := os.Getenv("CORRAL_TEST_MARK")
	var c interface{ Start() error }
	if os.Getenv("CORRAL_TEST_BARE") != "" {
		c = exec.Command("sleep", mark)
	} else {
		sb, err := corral.New(corral.Config{
			Workspace:   os.Getenv("CORRAL_TEST_WS"),
			DirectSpawn: os.Getenv("CORRAL_TEST_DIRECT") != "",
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c = sb.Command(context.Background(), "sleep", mark)
	}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("started")
	select {}
}

// runSubmount runs in its own user and mount namespaces, where it may mount:
// it mounts a tmpfs on CORRAL_TEST_DIR, tries to write into it (sandboxed or
// bare), and prints "written" when the write reached the tmpfs.
func runSubmount() int {
	dir := os.Getenv("CORRAL_TEST_DIR")
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, ""); err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		return 1
	}
	script := "echo x > " + dir + "/probe"
	if os.Getenv("CORRAL_TEST_BARE") != "" {
		exec.Command("sh", "-c", script).Run()
	} else {
		sb, err := corral.New(corral.Config{Workspace: os.Getenv("CORRAL_TEST_WS")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		sb.Command(context.Background(), "sh", "-c", script).Run()
	}
	if _, err := os.Stat(dir + "/probe"); err == nil {
		fmt.Println("written")
	}
	return 0
}
