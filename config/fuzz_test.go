package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
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

// FuzzResolve resolves every agent of a document the parser accepts, as
// a program would: parsing is deterministic; every path is absolute,
// clean and NUL-free; a sandbox config is made or refused on one line,
// and one made keeps an agent with workspace_access = "ro" off its
// workspace, and gives one with "none" a workspace of its own.
func FuzzResolve(f *testing.F) {
	f.Add([]byte("[[agents]]\nid = \"a\"\n[agents.sandbox]\nworkspace_access = \"ro\"\nwritable_paths = [\"../w\", \"/x/./y\"]\n"))
	f.Add([]byte("[[agents]]\nid = \"a\"\n[agents.sandbox]\nworkspace_access = \"none\"\nhidden_paths = [\"h\"]\nchangeset = \"cs\"\n"))
	data, err := os.ReadFile(examplePath(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, doc []byte) {
		cfg, err := Parse(bytes.NewReader(doc), "/f/agents.toml")
		if err != nil {
			return
		}
		again, err := Parse(bytes.NewReader(doc), "/f/agents.toml")
		require.NoError(t, err)
		require.Equal(t, cfg, again, "parsed twice, read otherwise")
		for _, id := range cfg.IDs() {
			a, _ := cfg.Agent(id)
			cc := a.Sandbox.CorralConfig()
			paths := append([]string{cc.Workspace, cc.Changeset}, cc.WritablePaths...)
			paths = append(append(append(paths, cc.ReadOnlyPaths...), cc.HiddenPaths...), cc.ChangesetPaths...)
			for _, b := range cc.Binds {
				paths = append(paths, b.Source)
			}
			for _, p := range paths {
				if p != "" {
					require.True(t, filepath.IsAbs(p) && filepath.Clean(p) == p && !strings.ContainsRune(p, 0), "agent %s: path %q", id, p)
				}
			}
			for _, own := range []string{"", "/own"} {
				st, err := cfg.SandboxConfig(id, corral.Config{Workspace: "/ws"}, own)
				if err != nil {
					require.NotContains(t, err.Error(), "\n")
					continue
				}
				switch a.Sandbox.WorkspaceAccess {
				case AccessRO:
					if own == "" {
						require.Contains(t, st.Config.ReadOnlyPaths, "/ws")
					} else {
						require.Equal(t, "/own", st.Config.Workspace)
					}
				case AccessNone:
					require.Equal(t, "/own", st.Config.Workspace)
				}
			}
		}
	})
}
