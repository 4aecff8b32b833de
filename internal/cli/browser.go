package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/agent"
	"github.com/corralhq/corral/browser"
	"github.com/corralhq/corral/config"
	"github.com/corralhq/corral/internal/flock"
)

func newBrowserCmd() *cobra.Command {
	var f runFlags
	var port int
	cmd := &cobra.Command{
		Use:   "browser [flags]",
		Short: "Run Chromium headless in a sandbox; print its DevTools endpoint",
		Long: `Start Chromium (or Chrome) headless inside a sandbox and print its DevTools
endpoint, http://127.0.0.1:PORT/TOKEN, as the first line of standard output.
Playwright's connectOverCDP takes it as is; Puppeteer's connect takes the
webSocketDebuggerUrl of its /json/version. The token is the endpoint's only
credential: treat the line as a secret. The browser ends with this command
(Ctrl-C, a signal, --timeout, or the death of the process that started it).

The browser runs with the sandbox's rules: the host read-only, hidden paths
and credential stores unreadable (your own browser profiles among them),
a private /tmp and /dev/shm, and the network policy, which is --net allow by
default here: no name is reachable unless --allow-domain allows it, and a
refused name is a network error in the page. Chromium runs without its own
sandbox (--no-sandbox), which needs namespaces corral forbids inside:
corral is the sandbox. Its profile is thrown away at the end, unless
--scope KEY keeps it in the scope's state; a second 'corral browser --scope
KEY' of the same configuration prints the running browser's endpoint and
waits for it to end, and 'corral sandboxes' lists it (kind browser) and
prunes it by the same rules. Without --workspace, the browser's workspace
(where downloads go) is an empty directory removed at the end.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBrowser(&f, port)
		},
	}
	f.register(cmd)
	cmd.Flags().IntVar(&port, "port", 0, "serve the endpoint on 127.0.0.1:`N` (default: a free port)")
	return cmd
}

// browserRecord is what a scope's running browser leaves in its state
// directory for a second `corral browser --scope` to find.
type browserRecord struct {
	Endpoint string `json:"endpoint"`
	Hash     string `json:"hash"`
	PID      int    `json:"pid"`
}

func runBrowser(f *runFlags, port int) error {
	if err := f.validate(); err != nil {
		return err
	}
	switch {
	case f.review || f.changeset != "":
		return usageError("--review and --changeset: not for the browser")
	case f.given("tty"):
		return usageError("--tty: not for the browser")
	case port < 0 || port > 65535:
		return usageError("--port %d: want 1-65535, or 0 for a free port", port)
	}
	exe, err := browser.Find()
	if err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	throwaway := !f.given("workspace") && f.configFile == ""
	if throwaway {
		dir, err := os.MkdirTemp("", "corral-browser-")
		if err != nil {
			return &exitError{code: exitSetup, msg: err.Error()}
		}
		defer os.RemoveAll(dir)
		if f.workspace, err = filepath.EvalSymlinks(dir); err != nil {
			return &exitError{code: exitSetup, msg: err.Error()}
		}
	}
	cfg, err := f.config()
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return err
	case err != nil:
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	if !f.given("net") && (f.configFile == "" || cfg.Network == "") {
		cfg.Network = corral.NetworkAllow
	}
	closeInherited()
	ctx := context.Background()
	if !f.outliveParent {
		var cancel context.CancelFunc
		if ctx, cancel, err = withParent(ctx); err != nil {
			return &exitError{code: exitSetup, msg: err.Error()}
		}
		defer cancel()
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if f.scope == "" {
		return serveBrowser(ctx, cfg, exe, port, "", "")
	}
	return scopedBrowser(ctx, f, cfg, exe, port, throwaway)
}

// scopedBrowser runs the browser of --scope, or, when one of the same
// configuration runs already, prints its endpoint and waits for it.
func scopedBrowser(ctx context.Context, f *runFlags, cfg corral.Config, exe string, port int, throwaway bool) error {
	rt, err := agent.New(&config.Config{}, agent.Options{StateDir: f.stateDir})
	if err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	hash := browserHash(cfg, exe, throwaway)
	cfg, dir, err := rt.WithBrowserScope(cfg, f.scope, hash)
	if err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	lockPath, recordPath := filepath.Join(dir, "browser.lock"), filepath.Join(dir, "browser.json")
	unlock, ok, err := flock.TryLock(lockPath)
	if err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	if !ok {
		return reuseBrowser(ctx, f.scope, lockPath, recordPath, hash)
	}
	defer unlock()
	defer os.Remove(recordPath)
	return serveBrowser(ctx, cfg, exe, port, recordPath, hash)
}

// browserHash hashes what makes a browser: the sandbox (without a
// throwaway workspace), its network lists and the executable.
func browserHash(cfg corral.Config, exe string, throwaway bool) string {
	if throwaway {
		cfg.Workspace = ""
	}
	s := fmt.Sprintf("%q", []any{exe, cfg.Mode, cfg.Workspace, cfg.WritablePaths, cfg.ReadOnlyPaths, cfg.HiddenPaths, cfg.Reveal,
		cfg.Network, cfg.AllowedDomains, cfg.DeniedDomains, cfg.AllowedIPs, cfg.Env, cfg.Limits})
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

// reuseBrowser prints the endpoint of the scope's running browser and
// waits until it ends (or this command is told to end).
func reuseBrowser(ctx context.Context, scope, lockPath, recordPath, hash string) error {
	var rec browserRecord
	for {
		data, err := os.ReadFile(recordPath)
		if err == nil && json.Unmarshal(data, &rec) == nil {
			break
		}
		// The first browser is still starting: its record comes once it
		// answers, or its lock goes when it fails.
		if unlock, ok, _ := flock.TryLock(lockPath); ok {
			unlock()
			return &exitError{code: exitSetup, msg: fmt.Sprintf("the browser of scope %s ended as it started; run again", scope)}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	if rec.Hash != hash {
		return &exitError{code: exitSetup, msg: fmt.Sprintf("scope %s has a browser of another configuration running (corral pid %d): end it first", scope, rec.PID)}
	}
	fmt.Println(rec.Endpoint)
	say("corral: the browser of scope %s runs already (corral pid %d); this command ends with it", scope, rec.PID)
	ended := make(chan struct{})
	go func() {
		if unlock, err := flock.Lock(lockPath); err == nil {
			unlock()
		}
		close(ended)
	}()
	select {
	case <-ended:
	case <-ctx.Done():
	}
	return nil
}

// serveBrowser launches the browser, prints its endpoint (and records it
// at recordPath, with hash, when not ""), and runs it until ctx ends.
func serveBrowser(ctx context.Context, cfg corral.Config, exe string, port int, recordPath, hash string) error {
	b, err := browser.Launch(ctx, withInitHelper(cfg), browser.Options{Executable: exe, Port: port})
	if err != nil {
		if errors.Is(context.Cause(ctx), errParentDied) {
			return &exitError{code: 128 + int(syscall.SIGKILL)}
		}
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	defer b.Close()
	if recordPath != "" {
		data, _ := json.Marshal(browserRecord{Endpoint: b.Endpoint(), Hash: hash, PID: os.Getpid()})
		if err := os.WriteFile(recordPath, data, 0o600); err != nil {
			return &exitError{code: exitSetup, msg: err.Error()}
		}
	}
	fmt.Println(b.Endpoint())
	select {
	case <-b.Done():
		return &exitError{code: 1, msg: fmt.Sprintf("the browser ended: %v", b.Err())}
	case <-ctx.Done():
	}
	if errors.Is(context.Cause(ctx), errParentDied) {
		return &exitError{code: 128 + int(syscall.SIGKILL)}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		say("corral: timed out")
	}
	return nil
}
