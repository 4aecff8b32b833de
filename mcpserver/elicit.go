package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/zones"
)

// ElicitApprover returns the zones.Approver that asks the user of the MCP
// client making the call, through elicitation: give it to the zones.FS
// behind ZoneFiles, zones.NewFS(access, mcpserver.ElicitApprover()). The
// user is shown the operation, the agent's path and a diff of a text file
// (the size of any other) and accepts or declines; declining, or
// dismissing the question, refuses the change with the ordinary refusal.
// A client that does not declare the elicitation capability (form mode)
// cannot be asked: the change is refused, saying so. It asks only within
// a call of a Server's tools; anywhere else it refuses.
//
// The question travels as the MCP specification has it for the
// client's protocol version: inside the tool's result, which the client
// answers by calling the tool again with the user's answer (multi
// round-trip requests, from protocol 2026-07-28), or for older clients as
// an elicitation/create request the SDK sends before calling the tool
// again. Either way the tool runs a second time, and the answer counts
// only for the very change it was asked about: a file changed in
// between is refused rather than written unseen.
func ElicitApprover() zones.Approver { return elicitApprover{} }

type elicitApprover struct{}

// errNoElicitation is why a client that cannot ask its user gets no
// change that needs approval.
var errNoElicitation = errors.New("the MCP client cannot ask its user: it does not declare the elicitation capability (form mode)")

// errAsking stops a tool whose change is being asked about: its result
// carries the question instead.
var errAsking = errors.New("waiting for the user's answer")

func (elicitApprover) Approve(ctx context.Context, r zones.Request) (bool, error) {
	c, ok := ctx.Value(elicitKey{}).(*elicitCall)
	if !ok {
		return false, errors.New("no MCP call to ask the user through")
	}
	return c.ask(r)
}

type elicitKey struct{}

// elicitCall is one tools/call, as the approver sees it: the client's
// answers, and the questions it is to be asked.
type elicitCall struct {
	req  *mcp.CallToolRequest
	salt []byte

	mu        sync.Mutex
	questions mcp.InputRequestMap
}

// withElicit prepares ctx for the approver of a call of req.
func (s *Server) withElicit(ctx context.Context, req *mcp.CallToolRequest) (context.Context, *elicitCall) {
	c := &elicitCall{req: req, salt: s.salt}
	return context.WithValue(ctx, elicitKey{}, c), c
}

// question returns the result asking the client the call's questions, or
// nil when there are none.
func (c *elicitCall) question() *mcp.CallToolResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.questions) == 0 {
		return nil
	}
	return &mcp.CallToolResult{InputRequests: c.questions}
}

func (c *elicitCall) ask(r zones.Request) (bool, error) {
	caps := c.req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil && caps.Elicitation.URL != nil {
		return false, errNoElicitation
	}
	key := c.key(r)
	answers := c.req.Params.InputResponses
	if res, ok := answers[key].(*mcp.ElicitResult); ok {
		return res.Action == "accept", nil
	}
	if len(answers) > 0 {
		return false, errors.New("the change is not the one the user was asked about (the file changed meanwhile); try again")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.questions == nil {
		c.questions = mcp.InputRequestMap{}
	}
	c.questions[key] = &mcp.ElicitParams{Mode: "form", Message: question(r), RequestedSchema: confirmSchema}
	return false, errAsking
}

// key names the question about r: the same change asked again has the
// same key, any other change another. The server's salt keeps an answer
// given to another server from counting.
func (c *elicitCall) key(r zones.Request) string {
	h := sha256.New()
	h.Write(c.salt)
	json.NewEncoder(h).Encode(r)
	return "approve-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// confirmSchema asks for nothing but the user's accept or decline.
var confirmSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}

// maxQuestionDiff bounds the diff shown in a question.
const maxQuestionDiff = 32 << 10

// question is what the user reads: the operation, the path and the diff or
// size, safe to print on a terminal.
func question(r zones.Request) string {
	var b strings.Builder
	what := "write"
	switch {
	case r.Op == zones.OpDelete:
		what = "delete"
	case r.Dir:
		what = "create the directory"
	}
	fmt.Fprintf(&b, "The agent asks to %s %s", what, changeset.Quote(r.Path))
	if !r.Dir {
		fmt.Fprintf(&b, " (%d bytes)", r.Size)
	}
	b.WriteString(". Allow it?")
	if r.Target != "" {
		fmt.Fprintf(&b, "\nA symbolic link to %s.", r.Target)
	}
	if r.Executable {
		b.WriteString("\nThe file will be executable.")
	}
	if r.Diff != "" {
		b.WriteString("\n\n")
		diff := r.Diff
		if len(diff) > maxQuestionDiff {
			diff = diff[:maxQuestionDiff]
		}
		for l := range strings.Lines(diff) {
			b.WriteString(changeset.VisibleLine(strings.TrimSuffix(l, "\n")))
			b.WriteByte('\n')
		}
		if len(r.Diff) > maxQuestionDiff {
			fmt.Fprintf(&b, "[diff cut: %d more bytes]\n", len(r.Diff)-maxQuestionDiff)
		}
	}
	return b.String()
}

// newSalt is a Server's secret for question keys.
func newSalt() []byte {
	b := make([]byte, 16)
	rand.Read(b)
	return b
}
