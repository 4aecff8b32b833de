package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/corralhq/corral/hooks"
	"github.com/corralhq/corral/tools"
)

// ToolCall is what a model asks for: a tool's name and its JSON arguments.
type ToolCall struct {
	Name string
	Args json.RawMessage
}

// Turn is one tool call and what came of it.
type Turn struct {
	Call   ToolCall
	Result string       // what the model was given
	Action hooks.Action // what the hook decided
}

// Transcript is a run's history.
type Transcript struct {
	Turns []Turn
	// Terminated is set when the hook ended the run.
	Terminated string
}

// Model chooses the next tool call from the history, or returns false when
// it is done.
type Model interface {
	Next(history []Turn) (ToolCall, bool)
}

// Tool runs one call and returns the text for the model. An error is shown
// to the model too: a refusal is information it can act on.
type Tool func(ctx context.Context, args json.RawMessage) (string, error)

// Loop drives a model through tool calls.
type Loop struct {
	Model Model
	Tools map[string]Tool
	Hook  hooks.Hook
	Out   io.Writer
}

// Run asks the model for calls until it is done or the hook ends the run.
func (l *Loop) Run(ctx context.Context) (*Transcript, error) {
	t := &Transcript{}
	for {
		call, ok := l.Model.Next(t.Turns)
		if !ok {
			fmt.Fprintln(l.Out, "model: done")
			return t, nil
		}
		turn, stop := l.step(ctx, call)
		t.Turns = append(t.Turns, turn)
		if stop != "" {
			t.Terminated = stop
			fmt.Fprintf(l.Out, "  => run terminated: %s\n", stop)
			return t, nil
		}
		fmt.Fprintf(l.Out, "  => %s\n", indent(turn.Result))
		if err := ctx.Err(); err != nil {
			return t, err
		}
	}
}

// step runs one call between the two hook checks. It returns a reason when
// the run must end.
func (l *Loop) step(ctx context.Context, call ToolCall) (Turn, string) {
	turn := Turn{Call: call}
	if d := l.Hook.BeforeToolCall(call.Name, call.Args); d.Action == hooks.Skip {
		// The arguments hold a secret: neither run nor log them.
		fmt.Fprintf(l.Out, "model calls %s (arguments withheld)\n", call.Name)
		turn.Action, turn.Result = hooks.Skip, "Tool call skipped: "+d.Reason
		return turn, ""
	}
	fmt.Fprintf(l.Out, "model calls %s %s\n", call.Name, call.Args)
	result := l.call(ctx, call)
	if d := l.Hook.AfterToolResult(call.Name, []byte(result)); d.Action == hooks.Terminate {
		// The result never reaches the model, nor this log.
		turn.Action = hooks.Terminate
		return turn, d.Reason
	}
	turn.Result = result
	return turn, ""
}

func (l *Loop) call(ctx context.Context, call ToolCall) string {
	tool, ok := l.Tools[call.Name]
	if !ok {
		return fmt.Sprintf("Error: no tool named %q", call.Name)
	}
	out, err := tool(ctx, call.Args)
	if err != nil {
		return "Error: " + err.Error()
	}
	return out
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n     ")
}

// tools returns the instance's tools by the names the model uses.
func (in *instance) tools() map[string]Tool {
	return map[string]Tool{
		"shell": jsonTool(func(ctx context.Context, a tools.ShellArgs) (string, error) {
			out, err := in.shell.Run(ctx, a)
			if err != nil {
				return "", err
			}
			return out.Format(), nil
		}),
		"exec": jsonTool(func(ctx context.Context, a tools.ExecArgs) (string, error) {
			out, err := in.exec.Run(ctx, a)
			if err != nil {
				return "", err
			}
			return out.Format(), nil
		}),
		"file": jsonTool(func(_ context.Context, a tools.FileArgs) (string, error) {
			return in.file.Run(a)
		}),
	}
}

// jsonTool decodes a call's arguments strictly, so a misspelled field is
// reported to the model instead of silently ignored.
func jsonTool[A any](fn func(context.Context, A) (string, error)) Tool {
	return func(ctx context.Context, raw json.RawMessage) (string, error) {
		var a A
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return "", fmt.Errorf("arguments: %w", err)
		}
		return fn(ctx, a)
	}
}
