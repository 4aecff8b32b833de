package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

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
			fmt.Fprintf(os.Stderr, "corral: %s\n", s)
		}
		return nil
	}
	return writeJSONLines(r.file, vs)
}

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
