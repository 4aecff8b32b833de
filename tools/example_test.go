package tools_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/tools"
)

// A program using tools calls corral.Init first in main (a test binary does
// it in TestMain), builds one sandbox for the agent and gives the model the
// tools built on it.
func Example() {
	instance, _ := os.MkdirTemp("", "corral-example-")
	defer os.RemoveAll(instance)
	workspace := filepath.Join(instance, "workspace")
	os.MkdirAll(workspace, 0o755)
	os.MkdirAll(tools.ToolsBinDir(instance), 0o755)

	cfg := tools.WithToolsBin(corral.Config{
		Workspace:     workspace,
		ReadOnlyPaths: []string{instance},
	}, tools.ToolsBinDir(instance))
	sb, err := corral.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	shell, err := tools.NewShell(sb, tools.Options{ToolsBin: tools.ToolsBinDir(instance)})
	if err != nil {
		fmt.Println(err)
		return
	}

	out, _ := shell.Run(context.Background(), tools.ShellArgs{Command: "echo hello > greeting.txt && cat greeting.txt"})
	fmt.Print(out.Format())

	// Writing outside the workspace fails in the kernel, whatever the
	// command looks like.
	out, _ = shell.Run(context.Background(), tools.ShellArgs{Command: "echo x > ../escaped.txt 2>/dev/null"})
	fmt.Println("escape exit code:", out.ExitCode)

	// A working directory outside the workspace is refused before anything
	// runs.
	_, err = shell.Run(context.Background(), tools.ShellArgs{Command: "ls", WorkingDir: ".."})
	fmt.Println("outside:", errors.Is(err, tools.ErrOutsideWorkspace))
	// Output:
	// Exit code: 0
	// --- stdout ---
	// hello
	// escape exit code: 2
	// outside: true
}

func ExampleCheckURL() {
	for _, u := range []string{"file:///etc/passwd", "http://169.254.169.254/latest/meta-data/", "http://127.1:8080/"} {
		_, err := tools.CheckURL(context.Background(), u)
		fmt.Println(err)
	}
	// Output:
	// url file:///etc/passwd: refused: scheme "file": only http and https are allowed
	// url http://169.254.169.254/latest/meta-data/: refused: 169.254.169.254 is a cloud metadata endpoint
	// url http://127.1:8080/: refused: 127.1 resolves to 127.0.0.1, which is loopback
}
