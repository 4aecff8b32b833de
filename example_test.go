package corral_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/corralhq/corral"
)

// A program calls Init first, builds a Sandbox once and runs its commands
// through it as it would with os/exec. (This example is compiled but not
// run by go test: it needs a main of its own for Init; examples/basic is the
// same as a runnable program.)
func Example() {
	if corral.Init() {
		return // this process was one of corral's helper processes
	}
	sb, err := corral.New(corral.Config{
		Workspace:     "/srv/agent/workspace",
		ReadOnlyPaths: []string{"/srv/agent/data"},
		HiddenPaths:   []string{"/srv/agent/keys"},
		Network:       corral.NetworkNone,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := sb.Command(ctx, "sh", "-c", "cat ../keys/* || echo refused; echo ok > notes.txt")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Println("command failed:", err)
	}
}
