package main

import (
	"fmt"
	"regexp"
)

// The hook interface the loop calls around every tool call. It has the
// shape of hooks.Hook, so hooks.LeakGuard, which also finds encoded
// secrets and many more kinds, can take keyGuard's place.
type hook interface {
	BeforeToolCall(name string, args []byte) decision
	AfterToolResult(name string, output []byte) decision
}

type action int

const (
	proceed   action = iota
	skip             // do not run the call
	terminate        // end the run; the output must not reach the model
)

type decision struct {
	Action action
	Reason string
}

// keyGuard finds plain-text API keys of two common kinds.
type keyGuard struct{}

var keyPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"anthropic API key", regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{20,}`)},
	{"GitHub token", regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}`)},
}

func (keyGuard) BeforeToolCall(name string, args []byte) decision {
	if kind := findKey(args); kind != "" {
		return decision{skip, fmt.Sprintf("the arguments of %s contain a secret (%s)", name, kind)}
	}
	return decision{}
}

func (keyGuard) AfterToolResult(name string, output []byte) decision {
	if kind := findKey(output); kind != "" {
		return decision{terminate, fmt.Sprintf("the output of %s contains a secret (%s)", name, kind)}
	}
	return decision{}
}

func findKey(b []byte) string {
	for _, p := range keyPatterns {
		if p.re.Match(b) {
			return p.kind
		}
	}
	return ""
}
