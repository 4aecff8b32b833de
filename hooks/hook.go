package hooks

import (
	"fmt"
	"strings"
)

// Action is what the agent loop does after asking a [Hook].
type Action int

const (
	// Continue runs the tool call, or hands its result to the model.
	Continue Action = iota
	// Skip does not run the tool call; the loop reports Reason to the
	// model in its place.
	Skip
	// Terminate ends the agent run: the result must not reach the model,
	// which could otherwise send it out with its next tool call.
	Terminate
)

func (a Action) String() string {
	switch a {
	case Continue:
		return "continue"
	case Skip:
		return "skip"
	case Terminate:
		return "terminate"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Decision is a hook's answer. Reason and Findings are empty for Continue;
// neither ever holds a secret, so both are safe to log and to show.
type Decision struct {
	Action   Action
	Reason   string
	Findings []Finding
}

// Hook is called by the agent loop around every tool call.
type Hook interface {
	// BeforeToolCall sees the tool's name and its arguments (usually
	// JSON) before the call runs.
	BeforeToolCall(name string, args []byte) Decision
	// AfterToolResult sees the tool's output before the model does.
	AfterToolResult(name string, output []byte) Decision
}

// LeakGuard is the Hook that stops secrets from leaving: a secret in a
// call's arguments skips the call, one in its output ends the run. The
// zero value is ready to use and safe for concurrent use.
type LeakGuard struct {
	// Known are secrets the caller holds (see ScanKnown): their values
	// are found whatever their shape, their placeholders never.
	Known []Known
}

var _ Hook = LeakGuard{}

// BeforeToolCall returns Skip when args hold a secret.
func (g LeakGuard) BeforeToolCall(name string, args []byte) Decision {
	return decide(Skip, name, ScanKnown(args, g.Known), "tool call %q skipped: its arguments contain %s")
}

// AfterToolResult returns Terminate when output holds a secret.
func (g LeakGuard) AfterToolResult(name string, output []byte) Decision {
	return decide(Terminate, name, ScanKnown(output, g.Known), "run terminated after tool %q: its output contains %s")
}

func decide(a Action, tool string, found []Finding, format string) Decision {
	if len(found) == 0 {
		return Decision{Action: Continue}
	}
	return Decision{Action: a, Reason: fmt.Sprintf(format, tool, summary(found)), Findings: found}
}

// summary names the kinds found, e.g. "a secret (anthropic in base64,
// github)".
func summary(found []Finding) string {
	var kinds []string
	seen := map[string]bool{}
	for _, f := range found {
		k := f.Pattern
		if f.Encoding != Plain {
			k += " in " + string(f.Encoding)
		}
		if !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	noun := "a secret"
	if len(found) > 1 {
		noun = fmt.Sprintf("%d secrets", len(found))
	}
	return fmt.Sprintf("%s (%s)", noun, strings.Join(kinds, ", "))
}
