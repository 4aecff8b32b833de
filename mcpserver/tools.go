package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/tools"
)

// The inputs of the tools, as the model sees them: the json tags name the
// arguments, the jsonschema tags describe them.

type shellIn struct {
	Command        string `json:"command" jsonschema:"the command line, run with sh -c"`
	WorkingDir     string `json:"working_dir,omitempty" jsonschema:"directory to run in, absolute or relative to the workspace, inside it; default the workspace"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"seconds before the command and everything it started are killed; default 60"`
	Stdin          string `json:"stdin,omitempty" jsonschema:"text given to the command on standard input"`
}

type execIn struct {
	Program        string            `json:"program" jsonschema:"the program, a name looked up on PATH or a path"`
	Args           []string          `json:"args,omitempty" jsonschema:"its arguments, passed as they are, without a shell"`
	WorkingDir     string            `json:"working_dir,omitempty" jsonschema:"directory to run in, absolute or relative to the workspace, inside it; default the workspace"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"environment variables to set; those that make programs load code (LD_PRELOAD, PYTHONPATH, ...) are refused"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" jsonschema:"seconds before the program and everything it started are killed; default 60"`
}

type pathIn struct {
	Path string `json:"path" jsonschema:"the file, absolute or relative to the workspace, inside it"`
}

type listIn struct {
	Path string `json:"path,omitempty" jsonschema:"the directory, absolute or relative to the workspace, inside it; default the workspace"`
}

type writeIn struct {
	Path    string `json:"path" jsonschema:"the file, absolute or relative to the workspace, inside it; created with its parent directories"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
}

type editIn struct {
	Path      string `json:"path" jsonschema:"the file, absolute or relative to the workspace, inside it"`
	OldString string `json:"old_string" jsonschema:"the exact text to replace, whitespace included; it must occur exactly once in the file"`
	NewString string `json:"new_string" jsonschema:"the text to put in its place"`
}

type changesIn struct {
	Diff bool `json:"diff,omitempty" jsonschema:"true for a unified diff of every change; false lists the changed paths"`
}

// tool is one entry of the catalog: its name and how to add it.
type tool struct {
	name string
	add  func(*mcp.Server)
}

// catalog lists every tool in the order offered.
func (s *Server) catalog() []tool {
	in, list := "inside the workspace", "List a directory inside the workspace: names, types and sizes."
	if s.zones {
		in = "in one of the agent's zones, at /ZONE/... (list_files of / lists them)"
		list = "List a directory of the agent's zones (/ lists the zones, /ZONE/... their files): names, types and sizes. Commands see the same zones at the same paths."
	}
	return append([]tool{
		def(s, ToolShell, "Run a shell command line (sh -c) in the sandbox, in the workspace by default. Returns the exit status, stdout and stderr (long output keeps its beginning and end). The workspace is writable; the rest of the host is read-only, credential stores are hidden, /tmp is private to the command. Unless the server was started otherwise: the network is the host's (--net none or --net allow restrict it), and nothing written outside the workspace persists from one call to the next, so caches in the home directory (npm, pip, go) are refused (--scope keeps a home and /tmp).", s.runShell),
		def(s, ToolExec, "Run a program with arguments in the sandbox, without a shell, as shell runs a command line (the same sandbox, network and persistence). Returns the exit status, stdout and stderr.", s.runExec),
		def(s, ToolReadFile, "Read a text file "+in+" (up to 1 MiB).", s.readFile),
		def(s, ToolWriteFile, "Create or replace a file "+in+" with the given content, creating parent directories. Files from which programs on the host run code (.git, .vscode, .mcp.json, shell start-up files...) are refused, as they are to commands.", s.writeFile),
		def(s, ToolEditFile, "Replace one exact occurrence of old_string by new_string in a file "+in+". Fails if old_string occurs nowhere or more than once; include surrounding lines to make it unique.", s.editFile),
		def(s, ToolListFiles, list, s.listFiles),
		def(s, ToolChanges, "Show the changes commands made to the workspace, kept in a changeset for review instead of written to the files: a list of changed paths, or a unified diff.", s.changes),
	}, s.browserCatalog()...)
}

// def ties a handler of typed input to a tool. The input schema is
// inferred from In once; each call's arguments are checked against it and
// decoded with encoding/json (see decodeArgs), not by the SDK's typed
// handler, whose decoder allocates a 32 KiB buffer for each of the two
// values it decodes per call.
func def[In any](s *Server, name, desc string, h func(context.Context, In) *mcp.CallToolResult) tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %s: %v", name, err)) // a programming error: the types are ours
	}
	plainTypes(schema)
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %s: %v", name, err))
	}
	// A change to a zone may need the user's approval, asked through
	// the client (ElicitApprover).
	asks := s.zones && slices.Contains(writingTools, name)
	return tool{name: name, add: func(m *mcp.Server) {
		m.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in In
				if err := decodeArgs(req.Params.Arguments, resolved, &in); err != nil {
					return errorResult(err), nil
				}
				ctx, done := s.call(ctx)
				defer done()
				if !asks {
					return h(ctx, in), nil
				}
				ctx, call := s.withElicit(ctx, req)
				res := h(ctx, in)
				if q := call.question(); q != nil {
					return q, nil
				}
				return res, nil
			})
	}}
}

// plainTypes gives each property one type: the inference makes a slice
// ["null", "array"], a union the official Inspector and some providers'
// function calling do not take. A null argument is taken as an absent one
// instead (decodeArgs).
func plainTypes(schema *jsonschema.Schema) {
	for _, p := range schema.Properties {
		if len(p.Types) == 2 && slices.Contains(p.Types, "null") {
			i := slices.Index(p.Types, "null")
			p.Type, p.Types = p.Types[1-i], nil
		}
	}
}

// decodeArgs checks a call's arguments against the tool's schema (types,
// required and unknown properties) and decodes them into in. An argument
// given as null is taken as absent.
func decodeArgs(raw json.RawMessage, schema *jsonschema.Resolved, in any) error {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return fmt.Errorf("arguments: not a JSON object: %w", err)
		}
	}
	maps.DeleteFunc(args, func(_ string, v any) bool { return v == nil })
	if err := schema.Validate(args); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, in); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

func (s *Server) runShell(ctx context.Context, in shellIn) *mcp.CallToolResult {
	out, err := s.shell.Run(ctx, tools.ShellArgs{
		Command: in.Command, WorkingDir: in.WorkingDir, TimeoutSeconds: in.TimeoutSeconds, Stdin: in.Stdin,
	})
	return commandResult(out, err)
}

func (s *Server) runExec(ctx context.Context, in execIn) *mcp.CallToolResult {
	var env []tools.EnvVar
	for _, k := range slices.Sorted(maps.Keys(in.Env)) {
		env = append(env, tools.EnvVar{Key: k, Value: in.Env[k]})
	}
	out, err := s.exec.Run(ctx, tools.ExecArgs{
		Program: in.Program, Args: in.Args, WorkingDir: in.WorkingDir, Env: env, TimeoutSeconds: in.TimeoutSeconds,
	})
	return commandResult(out, err)
}

func (s *Server) readFile(ctx context.Context, in pathIn) *mcp.CallToolResult {
	content, err := s.files.Read(ctx, in.Path)
	if err != nil {
		return errorResult(err)
	}
	return textResult(content)
}

func (s *Server) writeFile(ctx context.Context, in writeIn) *mcp.CallToolResult {
	if err := s.files.Write(ctx, in.Path, in.Content); err != nil {
		return errorResult(err)
	}
	return textResult(fmt.Sprintf("Wrote %d bytes to %s.", len(in.Content), in.Path))
}

func (s *Server) editFile(ctx context.Context, in editIn) *mcp.CallToolResult {
	if err := s.files.Edit(ctx, in.Path, in.OldString, in.NewString); err != nil {
		return errorResult(err)
	}
	return textResult(fmt.Sprintf("Edited %s: replaced 1 occurrence.", in.Path))
}

func (s *Server) listFiles(ctx context.Context, in listIn) *mcp.CallToolResult {
	p := in.Path
	switch {
	case p == "" && s.zones:
		p = "/"
	case p == "":
		p = "."
	}
	entries, cut, err := s.files.List(ctx, p)
	if err != nil {
		return errorResult(err)
	}
	return textResult(tools.FormatEntries(entries, cut))
}

func (s *Server) changes(_ context.Context, in changesIn) *mcp.CallToolResult {
	cs, err := changeset.Open(s.changeset)
	if err != nil {
		return errorResult(err)
	}
	if in.Diff {
		out := tools.NewCapture(tools.DefaultMaxOutputBytes)
		if err := cs.Diff(out); err != nil {
			return errorResult(err)
		}
		if out.String() == "" {
			return textResult("No changes.")
		}
		return textResult(out.String())
	}
	list, err := cs.List()
	if err != nil {
		return errorResult(err)
	}
	if len(list) == 0 {
		return textResult("No changes.")
	}
	out := tools.NewCapture(tools.DefaultMaxOutputBytes)
	for _, ch := range list {
		fmt.Fprintf(out, "%c %s\n", ch.Status.Letter(), changeset.Quote(ch.RealPath()))
	}
	return textResult(out.String())
}

// commandResult is what shell and exec return: the exit status and the
// captured streams in one block, and what the sandbox refused in another.
// A command that did not exit 0 is an error result.
func commandResult(out *tools.ShellOutput, err error) *mcp.CallToolResult {
	if err != nil {
		return errorResult(err)
	}
	summary := violationSummary(out)
	streams := *out
	streams.Refused = "" // said in its own block
	res := textResult(streams.Format())
	if summary != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: summary})
	}
	res.IsError = !out.Success
	return res
}

// violationSummary is the text block telling the model what the sandbox
// refused the command ("refused 3 writes (outside the writable paths),
// e.g. /home/u/.bashrc; --writable (writable_paths) allows it"), so that
// it asks instead of trying a bypass: the summary of the command's report
// (corral.Cmd.Report), which tools.Shell and tools.Exec turn on. It comes
// in a block of its own, apart from the command's output, which can say
// anything.
func violationSummary(out *tools.ShellOutput) string {
	if out.Refused == "" {
		return ""
	}
	return "The sandbox " + out.Refused + ". Each of these calls failed because of the sandbox's policy; " +
		"do not work around it: if the task needs it, ask the user to change the setting named."
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func errorResult(err error) *mcp.CallToolResult {
	msg := err.Error()
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Error: " + msg}}}
}
