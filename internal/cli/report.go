package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/corralhq/corral"
)

// reportSink is where `run` tells what the sandbox refused the command:
// JSON lines to --report's file (or stderr for -), else one summary line
// on stderr.
type reportSink struct {
	file  *os.File // nil: the summary line
	close bool
}

// openReport opens --report's file before the command runs, so that a path
// that cannot be written fails before anything ran.
func openReport(name string) (*reportSink, error) {
	switch name {
	case "":
		return &reportSink{}, nil
	case "-":
		return &reportSink{file: os.Stderr}, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--report %s: %v", name, err)}
	}
	return &reportSink{file: f, close: true}, nil
}

func (r *reportSink) write(vs []corral.Violation) error {
	if r.file == nil {
		if s := corral.Summary(unsaid(vs)); s != "" {
			say("corral: %s", s)
		}
		return nil
	}
	return writeJSONLines(r.file, vs)
}

// say prints one of corral's own lines ("corral: ...") on stderr. The
// command writes to the same stderr, and can print any text there, a line
// like corral's included: the report (--report) is what says for certain
// what the sandbox refused. On a terminal, say first undoes what a command
// may have left to hide or garble the line (concealed or invisible text, a
// line-drawing character set) and marks "corral" in reverse video, so that
// the line shows whatever state the command left the terminal in.
func say(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if sayMarked() {
		if rest, ok := strings.CutPrefix(line, "corral:"); ok {
			line = termReset + "\x1b[7mcorral\x1b[27m:" + rest
		} else {
			line = termReset + line
		}
	}
	if sayMarked() {
		// A terminal the command's own (corral run -t) has in raw mode
		// while it runs does not turn a newline into a new line.
		line += "\r"
	}
	fmt.Fprintln(os.Stderr, line)
}

// droppedAllow says what would have let the command write what line (a
// line of Cmd.Dropped, "path: why") names: "; allow_planting \".git\" in
// the config file allows it", from the report's entry for it.
func droppedAllow(vs []corral.Violation, line string) string {
	p, _, _ := strings.Cut(line, ": ")
	for _, v := range vs {
		if v.Kind == corral.ViolationPlant && v.Target == p {
			if a := v.Allows(); a != "" {
				return "; " + a + " allows it"
			}
		}
	}
	return ""
}

// termReset puts a terminal back to plain text: the ASCII character set
// shifted in (SI, then G0 as ASCII) and every attribute off (SGR 0).
const termReset = "\x0f\x1b(B\x1b[0m"

// sayMarked tells whether stderr is a terminal, where say marks its lines.
// Descriptor 2 is asked directly: os.Stderr.Fd would make it blocking.
var sayMarked = sync.OnceValue(func() bool { return term.IsTerminal(2) })

// unsaid leaves out the kinds `run` has already given a line each: what a
// protected name kept from the host ("corral: dropped ..."), refused
// network destinations ("corral: blocked ...") and limits hit ("corral:
// hit the ... limit").
func unsaid(vs []corral.Violation) []corral.Violation {
	var out []corral.Violation
	for _, v := range vs {
		switch v.Kind {
		case corral.ViolationPlant, corral.ViolationNetwork, corral.ViolationLimit:
			continue
		}
		out = append(out, v)
	}
	return out
}

func writeJSONLines(w io.Writer, vs []corral.Violation) error {
	enc := json.NewEncoder(w)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

func (r *reportSink) Close() error {
	if r.close {
		return r.file.Close()
	}
	return nil
}
