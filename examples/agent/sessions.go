package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/corralhq/corral/agent"
	"github.com/corralhq/corral/config"
	"github.com/corralhq/corral/tools"
)

// sessionsConfig is the agents' policy, as a program would keep it in its
// config file: every session but the main one is sandboxed, each in its own
// persistent sandbox, which sees the agent's workspace read-only at /agent
// and works in a workspace of its own at /workspace.
const sessionsConfig = `
[defaults.sandbox]
mode = "non-main"
scope = "session"
workspace_access = "ro"

[[agents]]
id = "helper"
main_session = "owner"
[agents.sandbox]
env = ["LANG=C.UTF-8"]
`

// SessionReport is what runSessions saw, for the test.
type SessionReport struct {
	MainSandboxed, ChatSandboxed bool
	ChatReadOnly                 bool
	MainOut, ChatOut, ChatAgain  string
	ChatFileRead, ChatFileWrite  string
}

// runSessions resolves two sessions of one agent through the runtime: the
// owner's main session, which runs on the host, and a chat session, which
// runs in a persistent sandbox whose /tmp and home outlive each command.
func runSessions(ctx context.Context, w io.Writer) (*SessionReport, error) {
	dir, err := os.MkdirTemp("", "corral-sessions-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	ws := filepath.Join(dir, "helper", "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(ws, "TODO.md"), []byte("- answer the chat\n"), 0o644); err != nil {
		return nil, err
	}
	cfg, err := config.Parse(strings.NewReader(sessionsConfig), filepath.Join(dir, "agents.toml"))
	if err != nil {
		return nil, err
	}
	rt, err := agent.New(cfg, agent.Options{
		StateDir:  filepath.Join(dir, "state"), // a program would keep the default, $XDG_STATE_HOME/corral
		Workspace: func(id string) string { return filepath.Join(dir, id, "workspace") },
	})
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	rep := &SessionReport{}

	main, err := rt.Session("helper", "owner")
	if err != nil {
		return nil, err
	}
	rep.MainSandboxed = main.Sandboxed
	if rep.MainOut, err = shellIn(ctx, main, "pwd && echo owner was here > TODO.owner"); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "session owner (main, sandboxed: %v):\n%s", main.Sandboxed, indentLines(rep.MainOut))

	chat, err := rt.Session("helper", "chat-42")
	if err != nil {
		return nil, err
	}
	rep.ChatSandboxed, rep.ChatReadOnly = chat.Sandboxed, chat.ReadOnlyWorkspace()
	// The file tool takes paths as the session's commands see them:
	// /workspace is the session's own, /agent the agent's, read-only.
	file, err := tools.NewFileFor(chat.Sandbox)
	if err != nil {
		return nil, err
	}
	if rep.ChatFileRead, err = file.Read("/agent/TODO.md"); err != nil {
		return nil, err
	}
	rep.ChatFileWrite = fmt.Sprint(file.Write("/agent/TODO.md", "x"))
	fmt.Fprintf(w, "session chat-42, file tool: read /agent/TODO.md → %q; write it → %s\n", rep.ChatFileRead, rep.ChatFileWrite)
	script := `pwd; cat /agent/TODO.md; echo draft > /workspace/reply.md; echo scratch > /tmp/scratch;
(echo x >> /agent/TODO.md) 2>/dev/null || echo "/agent is read-only"`
	if rep.ChatOut, err = shellIn(ctx, chat, script); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "session chat-42 (sandboxed: %v, agent workspace read-only: %v):\n%s",
		chat.Sandboxed, chat.ReadOnlyWorkspace(), indentLines(rep.ChatOut))
	// The next command of the session finds what the last one left.
	if rep.ChatAgain, err = shellIn(ctx, chat, "cat /tmp/scratch /workspace/reply.md"); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "session chat-42, next command:\n%s", indentLines(rep.ChatAgain))
	es, err := rt.Registry().List()
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		fmt.Fprintf(w, "persistent sandbox %s (state %s)\n", e.Key, e.Slug)
	}
	return rep, nil
}

// shellIn runs script through the shell tool in the session's sandbox.
func shellIn(ctx context.Context, s *agent.Session, script string) (string, error) {
	sh, err := tools.NewShell(s.Sandbox, tools.Options{})
	if err != nil {
		return "", err
	}
	out, err := sh.Run(ctx, tools.ShellArgs{Command: script})
	if err != nil {
		return "", err
	}
	return out.Stdout + out.Stderr, nil
}

func indentLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	return b.String()
}
