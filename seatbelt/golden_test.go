package seatbelt

import (
	"embed"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/sbplcheck"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the generator")

// The golden files are embedded so that the test binary also runs from a
// directory other than the package's (scripts/test-unprivileged.sh).
//
//go:embed testdata/*.golden
var golden embed.FS

// protectedNames mirrors corral.ProtectedNames; a copy keeps these golden
// files about the generator, not about that list.
var protectedNames = []string{
	".git/hooks", ".git/config", ".bashrc", ".bash_profile", ".bash_login",
	".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin",
	".config/fish", ".vscode/tasks.json", ".vscode/settings.json",
	".idea/workspace.xml", ".envrc",
}

// goldenInputs are representative configurations, one golden file each.
var goldenInputs = []struct {
	name string
	in   Input
}{
	{"minimal", Input{Workspace: "/Users/dev/project"}},
	{"agent", Input{
		Workspace: "/Users/dev/agent/workspace",
		Writable:  []string{"/Users/dev/Library/Caches/go-build"},
		ReadOnly:  []string{"/Users/dev/agent/workspace/data"},
		Hidden:    []string{"/Users/dev/.ssh", "/Users/dev/agent/workspace/.env"},
		Protected: protectedNames,
		TempDir:   "/private/var/folders/xy/abc123/T/corral-42",
	}},
	{"network-none", Input{
		Workspace:   "/Users/dev/project",
		Protected:   []string{".git/hooks", ".git/config"},
		TempDir:     "/private/var/folders/xy/abc123/T/corral-7",
		NetworkNone: true,
	}},
	{"aliases", Input{
		Workspace: "/tmp/ws",
		Writable:  []string{"/var/folders/xy/abc123/C/cache"},
		ReadOnly:  []string{"/etc/ssl"},
		Hidden:    []string{"/var/db/secret"},
		Protected: []string{".git/hooks"},
		TempDir:   "/var/folders/xy/abc123/T/corral-1",
	}},
	{"nested", Input{
		Workspace: "/w",
		ReadOnly:  []string{"/w/ro"},
		Writable:  []string{"/w/ro/rw"},
		Hidden:    []string{"/w/ro/rw/secret"},
		Protected: []string{".git/config"},
		TempDir:   "/private/tmp/t",
	}},
	{"quoting", Input{
		Workspace: `/Users/dev/my "quoted" project (copy)`,
		Writable:  []string{`/Users/dev/back\slash; #"not a regex"`, "/Users/dev/new\nline and 'single' $HOME"},
		ReadOnly:  []string{`/Users/dev/my "quoted" project (copy)/data")) (allow default`},
		Hidden:    []string{`/Users/dev/"))(allow file-read*`},
		Protected: []string{".git/hooks", `odd "name" (x)\y`},
		TempDir:   `/private/tmp/t m p`,
	}},
}

func TestGolden(t *testing.T) {
	for _, tt := range goldenInputs {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Generate(tt.in)
			require.NoError(t, err)
			file := "testdata/" + tt.name + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(filepath.FromSlash(file), []byte(p.String()), 0o644))
				return
			}
			want, err := golden.ReadFile(file)
			require.NoError(t, err, "run go test ./seatbelt -update to create it")
			assert.Equal(t, string(want), p.String())
		})
	}
}

// TestWellFormed checks every golden profile, and its annotated form, with
// the SBPL checker: balanced, properly quoted, parameters exactly defined.
func TestWellFormed(t *testing.T) {
	for _, tt := range goldenInputs {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Generate(tt.in)
			require.NoError(t, err)
			require.NoError(t, sbplcheck.Check(p.Text, paramNames(p)))
			require.NoError(t, sbplcheck.Check(p.String(), paramNames(p)))
		})
	}
}

func paramNames(p *Profile) []string {
	names := make([]string, len(p.Params))
	for i, prm := range p.Params {
		names[i] = prm.Name
	}
	return names
}
