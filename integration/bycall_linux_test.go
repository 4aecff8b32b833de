//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuardByCall attacks the protection of entries the host had, now that
// nothing is bound over them: every way a call can change an existing
// file is performed by the init, which refuses it for a protected entry,
// for what the host follows out of one at the top of the workspace (a
// protected symlink's target, a symlink inside a protected directory, a
// hook that is a symlink, core.hooksPath, a driver's script, an included
// config), and through a hard link or a
// descriptor's /proc link. Each probe first changes the host's file
// without the sandbox; inside, the host's file keeps its content.
func TestGuardByCall(t *testing.T) {
	cases := []struct {
		name, setup, attack, file string
	}{
		{"write-open without O_CREAT", `echo '{}' > .mcp.json`,
			`python3 -c 'import os; f = os.open(".mcp.json", os.O_WRONLY); os.write(f, b"evil")'`, ".mcp.json"},
		{"truncate", `echo 'export A=1' > .envrc`,
			`python3 -c 'import os; os.truncate(".envrc", 0); open(".envrc", "a").write("evil")'`, ".envrc"},
		{"chmod of a hook", `mkdir -p .husky && printf 'evil\n' > .husky/pre-commit`,
			`chmod +x .husky/pre-commit && test -x .husky/pre-commit && echo evil > /dev/null`, ".husky/pre-commit"},
		{"chmod of a hook through its descriptor's /proc link", `mkdir -p .husky && printf 'evil\n' > .husky/pre-commit`,
			`python3 -c 'import os; os.chmod(".husky/pre-commit", 0o755, follow_symlinks=False)'`, ".husky/pre-commit"},
		{"fchmod of a script on PATH", `mkdir -p .local/bin && printf 'echo evil\n' > .local/bin/x`,
			`python3 -c 'import os; os.fchmod(os.open(".local/bin/x", os.O_RDONLY), 0o755)'`, ".local/bin/x"},
		{"a file inside a protected directory", `mkdir -p sub/.vscode && echo '{}' > sub/.vscode/tasks.json`,
			`echo evil > sub/.vscode/tasks.json`, "sub/.vscode/tasks.json"},
		{"a hard link to a protected file", `echo 'export A=1' > .envrc`,
			`ln .envrc x && echo evil >> x`, ".envrc"},
		{"a descriptor reopened by its /proc link", `echo 'export A=1' > .envrc`,
			`python3 -c 'import os; f = os.open(".envrc", os.O_PATH); open("/proc/self/fd/%d" % f, "a").write("evil")'`, ".envrc"},
		{"a protected symlink's target", `mkdir -p tools/vscode && echo '{}' > tools/vscode/tasks.json && ln -s tools/vscode .vscode`,
			`echo evil > tools/vscode/tasks.json`, "tools/vscode/tasks.json"},
		{"a protected symlink's target replaced", `mkdir -p tools/vscode && echo '{}' > tools/vscode/tasks.json && ln -s tools/vscode .vscode`,
			`mv tools/vscode tools/old && mkdir tools/x && echo evil > tools/x/tasks.json && mv tools/x tools/vscode`, ".vscode/tasks.json"},
		{"a symlink inside a protected directory", `mkdir -p shared .claude && echo '{}' > shared/claude.json && ln -s ../shared/claude.json .claude/settings.json`,
			`echo evil > shared/claude.json`, ".claude/settings.json"},
		{"a symlink inside a protected directory whose target is missing", `mkdir -p .claude && ln -s ../shared/claude.json .claude/settings.json`,
			`mkdir -p shared && echo evil > shared/claude.json`, ".claude/settings.json"},
		{"a hook that is a symlink", `git init -q && mkdir scripts && printf '#!/bin/sh\n' > scripts/pre-commit && chmod +x scripts/pre-commit && ln -s ../../scripts/pre-commit .git/hooks/pre-commit`,
			`echo evil >> scripts/pre-commit`, "scripts/pre-commit"},
		{"core.hooksPath", `git init -q && mkdir -p tools/hooks && printf '#!/bin/sh\n' > tools/hooks/pre-commit && git config core.hooksPath tools/hooks`,
			`echo evil >> tools/hooks/pre-commit; echo evil > tools/hooks/post-checkout`, "tools/hooks/pre-commit"},
		{"a VS Code workspace file the host has", `mkdir -p sub && echo '{}' > sub/app.code-workspace`,
			`echo evil > sub/app.code-workspace`, "sub/app.code-workspace"},
		{"a new VS Code workspace file", `true`,
			`echo evil > new.code-workspace`, "new.code-workspace"},
		{"a filter driver's script", `git init -q && mkdir scripts && printf '#!/bin/sh\ncat\n' > scripts/clean.sh && git config filter.x.clean "sh scripts/clean.sh"`,
			`echo evil >> scripts/clean.sh`, "scripts/clean.sh"},
		{"a module a filter runs with python -m", `git init -q && git config filter.nb.clean "python3 -m nbclean"`,
			`echo evil > nbclean.py`, "nbclean.py"},
		{"a config file the repository's includes", `git init -q && echo '[user]' > .gitconfig.repo && git config include.path ../.gitconfig.repo`,
			`printf '[core]\n\tfsmonitor = evil\n' >> .gitconfig.repo`, ".gitconfig.repo"},
		{"a nested repository's filter module", `mkdir -p vendor/lib && cd vendor/lib && git init -q && git config filter.nb.clean "python3 -m nbclean"`,
			`echo evil > vendor/lib/nbclean.py`, "vendor/lib/nbclean.py"},
		{"a nested repository's core.hooksPath", `mkdir -p vendor/lib/tools/hooks && cd vendor/lib && git init -q && printf '#!/bin/sh\n' > tools/hooks/pre-commit && git config core.hooksPath tools/hooks`,
			`echo evil >> vendor/lib/tools/hooks/pre-commit`, "vendor/lib/tools/hooks/pre-commit"},
		{"a nested repository's hook that is a symlink", `mkdir -p vendor/lib/scripts && cd vendor/lib && git init -q && printf '#!/bin/sh\n' > scripts/pre-commit && ln -s ../../scripts/pre-commit .git/hooks/pre-commit`,
			`echo ok > vendor/lib/other; echo evil >> vendor/lib/scripts/pre-commit`, "vendor/lib/scripts/pre-commit"},
		{"a submodule's filter script", `git init -q && mkdir -p .git/modules/sub sub && git init -q --separate-git-dir .git/modules/sub sub && git -C sub config filter.x.clean "sh clean.sh" && printf 'cat\n' > sub/clean.sh`,
			`echo evil >> sub/clean.sh`, "sub/clean.sh"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			planted := func(boxed bool) bool {
				w := newWorld(t)
				hostGit(t, w, c.setup)
				var r result
				if boxed {
					r = w.sandboxed(w.config(), c.attack)
				} else {
					r = w.bare(c.attack)
				}
				t.Logf("boxed=%v: %s", boxed, r)
				b, _ := os.ReadFile(filepath.Join(w.ws, c.file))
				extra, _ := os.ReadFile(filepath.Join(w.ws, "tools/hooks/post-checkout"))
				if strings.Contains(c.name, "chmod") {
					fi, err := os.Stat(filepath.Join(w.ws, c.file))
					require.NoError(t, err)
					return fi.Mode()&0o111 != 0
				}
				return strings.Contains(string(b), "evil") || strings.Contains(string(extra), "evil")
			}
			require.True(t, planted(false), "the attack must work without the sandbox")
			assert.False(t, planted(true), "the sandbox let the command change what the host runs")
		})
	}
}

// TestStartupNamesUnderAWritableHomeDir: --writable ~/.config or ~/.local
// makes ~/.config/git/config (fsmonitor) and ~/.local/bin (on PATH)
// writable roots' content; the names listed for the top of a root are
// guarded relative to the home too. Without the sandbox the writes land.
func TestStartupNamesUnderAWritableHomeDir(t *testing.T) {
	script := `echo '[core] fsmonitor = evil' >> "$H/.config/git/config"; echo evil > "$H/.local/bin/git"; mkdir -p "$H/.config/fish" && echo evil > "$H/.config/fish/config.fish"`
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		home := realDir(t)
		t.Setenv("HOME", home)
		for _, d := range []string{".config/git", ".local/bin"} {
			require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
		}
		require.NoError(t, os.WriteFile(filepath.Join(home, ".config/git/config"), []byte("[user]\n"), 0o644))
		w.vars = append(w.vars, "H="+home)
		var r result
		if boxed {
			cfg := w.config()
			cfg.WritablePaths = []string{filepath.Join(home, ".config"), filepath.Join(home, ".local")}
			r = w.sandboxed(cfg, script)
		} else {
			r = w.bare(script)
		}
		landed := fileHas(filepath.Join(home, ".config/git/config"), "evil") ||
			fileHas(filepath.Join(home, ".local/bin/git"), "evil") ||
			fileHas(filepath.Join(home, ".config/fish/config.fish"), "evil")
		assert.Equal(t, !boxed, landed, "boxed=%v: %s", boxed, r)
	}
}

// An open with O_TMPFILE asks to write but makes no name: it works in a
// writable directory, and in a protected one it is refused like any write.
// Named later through its /proc link, it takes a plain name, not a
// protected one.
func TestTmpfileOpens(t *testing.T) {
	w := newWorld(t)
	hostGit(t, w, `mkdir -p .vscode`)
	r := w.sandboxed(w.config(), `python3 -c '
import os
f = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
os.write(f, b"x")
print("workspace ok")
# Given a name by linkat(AT_SYMLINK_FOLLOW) of its /proc link (src_dir_fd
# makes Python call linkat): a plain name works, a protected one is refused.
d = os.open(".", os.O_RDONLY)
os.link("/proc/self/fd/%d" % f, "made", src_dir_fd=d)
print("made", open("made").read())
try:
    os.link("/proc/self/fd/%d" % f, ".envrc", src_dir_fd=d)
    print("envrc linked")
except OSError as e:
    print("envrc", e.errno)
try:
    os.open(".vscode", os.O_TMPFILE | os.O_WRONLY, 0o600)
    print("vscode opened")
except OSError as e:
    print("vscode", e.errno)
'`)
	assert.Contains(t, r.stdout, "workspace ok", "%s", r)
	assert.Contains(t, r.stdout, "made x", "%s", r)
	assert.Contains(t, r.stdout, "envrc 1", "%s", r)
	assert.NoFileExists(t, filepath.Join(w.ws, ".envrc"))
	assert.Contains(t, r.stdout, "vscode 30", "%s", r)
}

// A mode changed through a descriptor's /proc link changes the file, as
// glibc's fchmodat with AT_SYMLINK_NOFOLLOW does it: tar restores the modes
// of the directories it extracts so. Without the sandbox it works the same.
func TestChmodThroughADescriptorLink(t *testing.T) {
	script := `mkdir -p src/d && chmod 700 src/d && tar -cf t.tar -C src d && mkdir x && tar -xf t.tar -C x && stat -c %a x/d && ` +
		`touch f && python3 -c 'import os; os.chmod("f", 0o640, follow_symlinks=False)' && stat -c %a f`
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		var r result
		if boxed {
			r = w.sandboxed(w.config(), script)
		} else {
			r = w.bare(script)
		}
		require.Equal(t, 0, r.code, "boxed=%v: %s", boxed, r)
		assert.Equal(t, "700\n640\n", r.stdout, "boxed=%v: %s", boxed, r)
	}
}

// A driver the user's own git config defines runs from the top of every
// worktree (nbstripout --install --global): the module it runs there is
// protected as the repository's own drivers' are. Without the sandbox the
// command's module lands, for the host's next git add to run.
func TestGlobalDriverModule(t *testing.T) {
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		home := realDirOutsideTmp(t) // the init reads it from the sandbox's view, where /tmp is its own
		t.Setenv("HOME", home)
		require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"),
			[]byte("[filter \"nb\"]\n\tclean = \"/usr/bin/python3\" -m nbglobal\n"), 0o644))
		hostGit(t, w, `git init -q`)
		var r result
		if boxed {
			r = w.sandboxed(w.config(), `echo evil > nbglobal.py`)
		} else {
			r = w.bare(`echo evil > nbglobal.py`)
		}
		assert.Equal(t, !boxed, fileHas(filepath.Join(w.ws, "nbglobal.py"), "evil"), "boxed=%v: %s", boxed, r)
	}
}
