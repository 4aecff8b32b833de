// Command agent is a small, complete agent loop built on corral: a scripted
// model asks for tool calls, the loop checks each call with a hook, runs
// it through the tools (shell and exec inside a sandbox, file access
// confined to the workspace), checks the result with the hook again and
// hands it back to the model.
//
// The model is a script, so the example needs no network and no API key.
// It makes one ordinary call, then tries what a model does when it is
// told no: escaping the workspace, injecting a library, sending a secret
// out, and reading one into its context. Then it resolves two sessions of
// an agent through package agent: the main one runs on the host, a chat
// session in a persistent sandbox (sessions.go). Last (delegate.go), a
// parent hands work to a child worker that gets only the zones it
// declares, with an approver that prints each change and decides. Run it
// with
//
//	go run ./examples/agent
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/hooks"
	"github.com/corralhq/corral/tools"
)

func main() {
	if corral.Init() {
		return
	}
	if _, err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	fmt.Println()
	if _, err := runSessions(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	if _, err := delegate(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// fakeKey looks like an Anthropic API key and is not one.
const fakeKey = "sk-ant-api03-EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE-exampleAA"

// run sets up an instance in a temporary directory, runs the scripted
// model against it and reports what happened.
func run(ctx context.Context, w io.Writer) (*Transcript, error) {
	dir, err := os.MkdirTemp("", "corral-agent-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, err := newInstance(dir)
	if err != nil {
		return nil, err
	}
	defer in.close()
	fmt.Fprintf(w, "instance %s\nworkspace %s\n\n", in.dir, in.workspace)
	loop := &Loop{Model: newScriptedModel(in), Tools: in.tools(), Hook: hooks.LeakGuard{}, Out: w}
	return loop.Run(ctx)
}

// instance is an agent's home on disk, laid out as a long-running agent
// host keeps it: {dir}/agents/main/workspace is the agent's to change,
// {dir}/agents/main/data holds its state and credentials, {dir}/tools/bin
// holds programs the host installed for it.
type instance struct {
	dir, workspace, data, bin string
	sb                        *corral.Sandbox
	shell                     *tools.Shell
	exec                      *tools.Exec
	file                      *tools.File
}

func newInstance(dir string) (*instance, error) {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	in := &instance{
		dir:       dir,
		workspace: filepath.Join(dir, "agents", "main", "workspace"),
		data:      filepath.Join(dir, "agents", "main", "data"),
		bin:       tools.ToolsBinDir(dir),
	}
	if err := in.populate(); err != nil {
		return nil, err
	}
	// The whole instance is visible read-only, the workspace writable; the
	// tools bin directory stays read-only whatever else is writable.
	cfg := tools.WithToolsBin(corral.Config{
		Workspace:     in.workspace,
		ReadOnlyPaths: []string{in.dir, in.data},
	}, in.bin)
	if in.sb, err = corral.New(cfg); err != nil {
		return nil, err
	}
	return in, in.build()
}

func (in *instance) populate() error {
	for _, d := range []string{in.workspace, in.data, in.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	files := []struct {
		path, content string
		mode          os.FileMode
	}{
		{filepath.Join(in.data, "config.toml"), "model = \"scripted\"\n", 0o644},
		{filepath.Join(in.data, "credentials.env"), "ANTHROPIC_API_KEY=" + fakeKey + "\n", 0o644},
		{filepath.Join(in.bin, "wordcount"), "#!/bin/sh\nwc -w \"$@\"\n", 0o755},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, []byte(f.content), f.mode); err != nil {
			return err
		}
	}
	return nil
}

func (in *instance) build() error {
	opts := tools.Options{ToolsBin: in.bin}
	var err error
	if in.shell, err = tools.NewShell(in.sb, opts); err != nil {
		return err
	}
	if in.exec, err = tools.NewExec(in.sb, opts); err != nil {
		return err
	}
	in.file, err = tools.NewFile(in.workspace)
	return err
}

func (in *instance) close() { in.sb.Close() }
