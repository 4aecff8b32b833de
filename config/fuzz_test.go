package config

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse checks that no document panics the parser, and that every
// rejection is an *Error on one line.
func FuzzParse(f *testing.F) {
	f.Add([]byte("[[agents]]\nid = \"a\"\n[agents.sandbox]\nmode = \"enabled\"\nwritable_paths = [\"w\"]\n"))
	f.Add([]byte("agents = [{id = \"a\", sandbox = {env = [\"A=1\"], network = \"none\"}}]\n"))
	f.Add([]byte("[[agents]]\nid = \"a\"\nsandbox.hidden_paths = [\n  \"/h\", # c\n]\n[[agents.sandbox]]\n"))
	data, err := os.ReadFile(examplePath(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, err := Parse(bytes.NewReader(doc), "/f/agents.toml")
		if err == nil {
			return
		}
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %T is not an *Error: %v", err, err)
		}
		if strings.Contains(ce.Key, "\n") {
			t.Fatalf("key spans lines: %q", ce.Key)
		}
	})
}
