// Command basic shows corral containing a command: it writes in its
// workspace, and fails to write outside it or to read a hidden file.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/corralhq/corral"
)

func main() {
	if corral.Init() {
		return
	}
	// Not under /tmp: the sandbox's /tmp is private, so paths there would be
	// missing rather than refused, which makes a less telling demo.
	root, err := os.MkdirTemp(".", "corral-example-")
	if err == nil {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	ws := filepath.Join(root, "workspace")
	secrets := filepath.Join(root, "secrets")
	for _, d := range []string{ws, secrets} {
		if err := os.Mkdir(d, 0o700); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secrets, "api-key"), []byte("sk-example\n"), 0o600); err != nil {
		log.Fatal(err)
	}

	sb, err := corral.New(corral.Config{Workspace: ws, HiddenPaths: []string{secrets}})
	if err != nil {
		log.Fatal(err)
	}
	script := fmt.Sprintf(`
		echo hello > notes.txt && echo "workspace write: ok"
		cat %[1]s/api-key 2>&1 || true
		cp %[1]s/api-key /tmp/ 2>&1 || true
		echo pwned > %[2]s/pwned 2>&1 || true
		echo pwned > /etc/pwned 2>&1 || true`, secrets, root)
	out, err := sb.Command(context.Background(), "sh", "-c", script).CombinedOutput()
	fmt.Print(string(out))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err == nil {
		fmt.Println("host sees notes.txt in the workspace")
	}
}
