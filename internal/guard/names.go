// Package guard keeps what a sandboxed command writes inside a writable root
// from changing what git, editors, agents and shells on the host run later.
//
// The protected entries are listed once, in [List]. At command start, each
// writable root is walked (reading again only the directories changed since
// Prepare read the root while the sandbox was built): every repository's
// git directory is staged on an overlay whose upper layer the host cannot
// see, and every other protected entry that exists is bound read-only; so is
// every bare repository staged: a directory whose HEAD git takes
// ([HeadName]), and a HEAD git does not take is read-only. A protected entry
// the command creates while it runs is staged too ([Session.Protects],
// [Session.Staged]), and so is a HEAD it creates outside staged content
// ([Session.StagesHead]): the host sees an empty placeholder until the
// command is gone and [Session.Land] puts its content there, so a directory
// the command turns into a repository is none to git on the host meanwhile.
// When the command has exited and everything it started is gone, the staged
// changes are merged back into the host's git directory through an
// allowlist ([Merge]), and protected entries that are new or were replaced
// meanwhile are moved into a held directory (HeldDir) in their writable
// root. Whatever is not merged is reported as dropped.
package guard

import (
	"slices"
	"strings"
	"sync"
)

// Entry is one protected name, relative to a writable root.
type Entry struct {
	// Name is a directory (protected as a whole) or a file.
	Name string
	// Anywhere says the name is protected at every depth of a writable
	// root (a nested repository, a subfolder an editor opens), not only
	// at its top.
	Anywhere bool
	// What says which program runs code from it.
	What string
}

// GitDir is the name of a repository's git directory; it is staged rather
// than made read-only.
const GitDir = ".git"

// HeadName is the file that makes a directory a git directory: git (and
// every tool that runs it, an editor's background git status among them)
// takes a directory for a repository, with its config, hooks and commondir,
// only when its HEAD is a symlink into refs/ or a file naming a ref or an
// object (setup.c, is_git_directory). A new one in a writable root is
// staged like a protected entry, so a directory the command turns into a
// repository is never one on the host while the command runs: the host
// sees an empty HEAD, which git does not take.
const HeadName = "HEAD"

// HeldDir is where, in each writable root, protected entries created or
// replaced by a command are moved to when it exits.
const HeldDir = ".corral-held"

var list = []Entry{
	{GitDir, true, "git: hooks, config (fsmonitor, pager, aliases, filters...), commondir; and every HEAD, which makes its directory a repository (a bare one)"},
	{".gitmodules", true, "git: submodule URLs and update commands"},
	{".pre-commit-config.yaml", true, "pre-commit: the commands git's hooks run"},
	{".husky", true, "husky: the hook scripts git runs (core.hooksPath)"},
	{".githooks", true, "git: a hooks directory core.hooksPath names"},
	{"lefthook.yml", true, "lefthook: the commands git's hooks run"},
	{".lefthook.yml", true, "lefthook: the commands git's hooks run"},
	{".vscode", true, "VS Code: folder-open tasks, settings, launch configurations"},
	{".idea", true, "JetBrains IDEs: run configurations, startup tasks"},
	{".claude", true, "Claude Code: settings with hooks, commands, agents"},
	{".mcp.json", true, "agents: MCP server commands"},
	{".codex", true, "Codex: configuration and MCP servers"},
	{".cursor", true, "Cursor: rules and MCP servers"},
	{".gemini", true, "Gemini CLI: settings and MCP servers"},
	{".envrc", true, "direnv: run on entering the directory"},
	{".npmrc", true, "npm: the shell scripts run with (script-shell), hooks"},
	{".yarnrc", true, "yarn 1: the yarn it runs (yarn-path)"},
	{".yarnrc.yml", true, "yarn 2+: the yarn it runs (yarnPath), plugins"},
	{".windsurf", true, "Windsurf: rules and MCP servers"},
	{".amazonq", true, "Amazon Q: MCP servers"},
	{".nvim.lua", true, "Neovim: run on start in the directory (exrc)"},
	{".nvimrc", true, "Neovim and Vim: run on start in the directory (exrc)"},
	{".exrc", true, "Vim: run on start in the directory (exrc)"},
	{"lefthook-local.yml", true, "lefthook: local commands git's hooks run, merged over lefthook.yml"},
	{".lefthook-local.yml", true, "lefthook: local commands git's hooks run, merged over lefthook.yml"},
	{"lefthook.yaml", true, "lefthook: the commands git's hooks run"},
	{".lefthook.yaml", true, "lefthook: the commands git's hooks run"},
	{"lefthook-local.yaml", true, "lefthook: local commands git's hooks run"},
	{".lefthook-local.yaml", true, "lefthook: local commands git's hooks run"},
	{".huskyrc", true, "husky 4: the commands git's hooks run"},
	{".huskyrc.json", true, "husky 4: the commands git's hooks run"},
	{".huskyrc.js", true, "husky 4: the commands git's hooks run, and the file itself is run"},
	{"husky.config.js", true, "husky 4: the commands git's hooks run, and the file itself is run"},
	{".cargo", true, "cargo, rust-analyzer: config.toml's build.rustc-wrapper, target runners and aliases, run by the cargo metadata an editor runs on folder open"},
	{".zed", true, "Zed: tasks, language server and context server commands"},
	{".devcontainer", true, "VS Code Dev Containers, devcontainer CLI: initializeCommand, run on the host"},
	{".devcontainer.json", true, "VS Code Dev Containers, devcontainer CLI: initializeCommand, run on the host"},
	{".continue", true, "Continue: MCP servers and config"},
	{".roo", true, "Roo Code: MCP servers (mcp.json), rules"},
	{".kiro", true, "Kiro: agent hooks (shell commands), MCP servers"},
	{"opencode.json", true, "opencode: MCP server commands, plugins"},
	{"opencode.jsonc", true, "opencode: MCP server commands, plugins"},
	{".opencode", true, "opencode: plugins, MCP servers, agents"},
	{".crush.json", true, "Crush: MCP server and language server commands"},
	{"crush.json", true, "Crush: MCP server and language server commands"},
	{".aider.conf.yml", true, "aider: lint-cmd and test-cmd it runs"},
	{"mise.toml", true, "mise: hooks on entering the directory, tasks, env sourced from scripts"},
	{".mise.toml", true, "mise: hooks on entering the directory, tasks, env sourced from scripts"},
	{"mise.local.toml", true, "mise: hooks on entering the directory, tasks, env sourced from scripts"},
	{".mise.local.toml", true, "mise: hooks on entering the directory, tasks, env sourced from scripts"},
	{".tool-versions", true, "asdf, mise: the plugin versions installed and run on entering the directory"},
	{".pnpmfile.cjs", true, "pnpm: hooks run on every install (readPackage, afterAllResolved)"},
	{"*.code-workspace", true, "VS Code: a multi-root workspace's tasks (run when it opens), settings, launch configurations"},
	{".bashrc", false, "bash"},
	{".bash_profile", false, "bash login"},
	{".bash_login", false, "bash login"},
	{".bash_logout", false, "bash logout"},
	{".bash_aliases", false, "bash (sourced by Debian's .bashrc)"},
	{".profile", false, "sh login"},
	{".zshrc", false, "zsh"},
	{".zshenv", false, "zsh"},
	{".zprofile", false, "zsh login"},
	{".zlogin", false, "zsh login"},
	{".zlogout", false, "zsh logout"},
	{".config/fish", false, "fish"},
	{".gitconfig", false, "git: global config"},
	{".config/git", false, "git: global config and attributes"},
	{".ssh", false, "ssh: config (ProxyCommand), authorized_keys, rc"},
	{".config/systemd", false, "systemd user units"},
	{".config/autostart", false, "desktop session autostart"},
	{".config/environment.d", false, "systemd user environment"},
	{".local/bin", false, "on PATH"},
	{".local/lib", false, "python user site-packages (usercustomize)"},
	{".pam_environment", false, "login environment"},
	{".xprofile", false, "X session"},
	{".xsession", false, "X session"},
	{".xsessionrc", false, "X session"},
	{".xinitrc", false, "X session"},
	{".inputrc", false, "readline: macros"},
	{".pythonstartup", false, "python interactive startup"},
}

// user are the names the configuration protects besides the list
// (corral.Config.Protect), as Also made them known to this process.
var (
	userMu sync.RWMutex
	user   []Entry
)

// Also makes names protected in this process besides the list, for the
// walk (Prepare reads every name protected), Lookup and the creator: the
// init calls it with the names in force before Prepare. A name the list
// holds already is left as listed. A name of the user's is protected at
// every depth of a writable root when it is a plain name, at the top of
// each root when it holds a slash ("tools/hooks"), as the listed ones: a
// directory's entries are matched one name at a time.
func Also(names []string) {
	userMu.Lock()
	defer userMu.Unlock()
	for _, n := range names {
		if slices.ContainsFunc(list, func(e Entry) bool { return e.Name == n }) ||
			slices.ContainsFunc(user, func(e Entry) bool { return e.Name == n }) {
			continue
		}
		user = append(user, UserEntry(n))
	}
}

// UserEntry is the entry of a name the configuration protects that the list
// does not hold.
func UserEntry(name string) Entry {
	return Entry{Name: name, Anywhere: !strings.Contains(name, "/"), What: UserWhat}
}

// UserWhat is the What of the user's entries.
const UserWhat = "named by the configuration (protect)"

// all is the list followed by the user's names.
func all() []Entry {
	userMu.RLock()
	defer userMu.RUnlock()
	return slices.Concat(list, user)
}

// List returns the protected entries, in a fixed order: the list, then
// the names Also added.
func List() []Entry { return all() }

// Names returns the names of List.
func Names() []string {
	l := all()
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = e.Name
	}
	return out
}

// Lookup returns the entry named name, or whose pattern name matches (see
// Entry.Matches). It allocates nothing: the walk and the creator call it
// for every name in force.
func Lookup(name string) (Entry, bool) {
	if i := slices.IndexFunc(list, func(e Entry) bool { return e.Matches(name) }); i >= 0 {
		return list[i], true
	}
	userMu.RLock()
	defer userMu.RUnlock()
	if i := slices.IndexFunc(user, func(e Entry) bool { return e.Matches(name) }); i >= 0 {
		return user[i], true
	}
	return Entry{}, false
}

// Matches tells whether name is e's: its name, or, for a name that starts
// with "*" (a pattern, *.code-workspace), any longer name that ends as it
// does.
func (e Entry) Matches(name string) bool {
	if suffix, ok := strings.CutPrefix(e.Name, "*"); ok {
		return name == e.Name || len(name) > len(suffix) && strings.HasSuffix(name, suffix)
	}
	return e.Name == name
}
