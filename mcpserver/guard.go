package mcpserver

import (
	"context"
	"encoding/json"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/hooks"
)

// leakGuard wraps every tools/call, in front of the SDK's own argument
// checks (whose messages could quote an argument): a call whose name or
// arguments hold a secret does not run, and a secret in the result, or in
// an error, is redacted before the client sees it.
func leakGuard(known []hooks.Known) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return guarded(next, known)
	}
}

// known are the sandbox's secrets as the scanner takes them: each value,
// with the placeholder the sandbox gave it.
func known(sb *corral.Sandbox, secrets []corral.Secret) []hooks.Known {
	var out []hooks.Known
	for _, info := range sb.Secrets() {
		k := hooks.Known{Name: info.Name, Placeholder: info.Placeholder}
		for _, x := range secrets {
			if x.Name == info.Name {
				k.Value = x.Value
			}
		}
		if k.Value == "" {
			k.Value = os.Getenv(info.Name) // as corral.New takes it
		}
		out = append(out, k)
	}
	return out
}

func guarded(next mcp.MethodHandler, known []hooks.Known) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		if refusal := refuseSecrets(call.Params, known); refusal != nil {
			return refusal, nil
		}
		res, err := next(ctx, method, req)
		if err != nil {
			if out, found := hooks.RedactKnown([]byte(err.Error()), known); len(found) > 0 {
				return errorResult(redactedError(string(out))), nil
			}
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok {
			redactResult(r, known)
		}
		return res, nil
	}
}

type redactedError string

func (e redactedError) Error() string { return string(e) }

// refuseSecrets returns the refusal of a call whose name or arguments hold
// a secret, or nil. The reason names the kind of secret, never the secret.
func refuseSecrets(p *mcp.CallToolParamsRaw, known []hooks.Known) *mcp.CallToolResult {
	raw, err := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}{p.Name, p.Arguments})
	if err != nil {
		return nil
	}
	g := hooks.LeakGuard{Known: known}
	d := g.BeforeToolCall(p.Name, raw)
	if d.Action == hooks.Continue {
		return nil
	}
	if len(hooks.ScanKnown([]byte(p.Name), known)) > 0 {
		d = g.BeforeToolCall("(name withheld)", raw)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
		Text: "Refused: " + d.Reason + ". Secrets must not leave through tool calls; do not retry with the secret.",
	}}}
}

// redactResult replaces the lines holding a secret in every text block of
// r, and marks r as an error when it did.
func redactResult(r *mcp.CallToolResult, known []hooks.Known) {
	leaked := false
	for i, c := range r.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		out, found := hooks.RedactKnown([]byte(tc.Text), known)
		if len(found) == 0 {
			continue
		}
		leaked = true
		r.Content[i] = &mcp.TextContent{Text: string(out)}
	}
	if leaked {
		r.IsError = true
		r.StructuredContent = nil
		r.Content = append(r.Content, &mcp.TextContent{
			Text: "The result held a secret, redacted above. Do not try to read or print it another way.",
		})
	}
}
