package config

import (
	"fmt"
	"strings"
)

// Error reports a problem in a config file: which file, which line, which
// key and what is wrong with it.
type Error struct {
	// File names the document as it was given to [Load] or [Parse].
	File string
	// Line is 1-based; 0 when the problem has no single place, such as a
	// file without any agent.
	Line int
	// Key is the full path of the offending key, with array indices, such as
	// "agents[1].sandbox.mode"; empty for a syntax error.
	Key string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying error from the TOML decoder, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		b.WriteString(": ")
		b.WriteString(e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }
