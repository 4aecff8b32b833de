package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/corralhq/corral"
)

// mcpServerName is the executable that serves `corral mcp`
// (cmd/corral-mcp). It links the MCP SDK, and with it net/http, crypto
// and JSON schema code whose package initialisation every command of a
// binary pays; the corral binary leaves it out, so that `corral run` and
// the rest start without it.
const mcpServerName = "corral-mcp"

// execMCP replaces this process by corral-mcp beside it, run with args:
// the same arguments as `corral mcp`, once they are checked.
func execMCP(f *runFlags, m *mcpFlags, args []string) error {
	if _, err := checkMCP(f, m); err != nil {
		return err
	}
	cfg, _, err := mcpConfig(f)
	if err != nil {
		return err
	}
	path, err := mcpServerPath(cfg)
	if err != nil {
		return err
	}
	err = syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return &exitError{code: exitSetup, msg: fmt.Sprintf("mcp: running %s: %v", path, err)}
}

// mcpServerPath is corral-mcp's path beside this executable, resolved. It
// must be an executable file outside every path cfg's commands may write,
// as corral-init must: a command could otherwise replace the server that
// the next `corral mcp` runs outside any sandbox.
func mcpServerPath(cfg corral.Config) (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", &exitError{code: exitSetup, msg: fmt.Sprintf("mcp: cannot find this executable's directory, where %s lies: %v", mcpServerName, err)}
	}
	path := filepath.Join(filepath.Dir(exe), mcpServerName)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", &exitError{code: exitSetup, msg: fmt.Sprintf("mcp: %s not found: corral mcp runs the server from %s beside corral "+
			"(make build builds both; go install github.com/corralhq/corral/cmd/...@latest installs both)", path, mcpServerName)}
	case err != nil:
		return "", &exitError{code: exitSetup, msg: "mcp: " + err.Error()}
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return "", &exitError{code: exitSetup, msg: fmt.Sprintf("mcp: %s is not an executable file", path)}
	case othersMayReplace(path) != "":
		return "", &exitError{code: exitSetup, msg: fmt.Sprintf("mcp: %s is not safe to run: %s", path, othersMayReplace(path))}
	case writableIn(cfg, path):
		return "", &exitError{code: exitSetup, msg: fmt.Sprintf("mcp: %s lies where this sandbox's commands may write, so a command could replace it; "+
			"install corral and %s outside the workspace and writable paths", path, mcpServerName)}
	}
	return path, nil
}

// argsAfter returns the arguments after the first name in args: a
// subcommand's own.
func argsAfter(args []string, name string) []string {
	if i := slices.Index(args, name); i >= 0 {
		return args[i+1:]
	}
	return nil
}
