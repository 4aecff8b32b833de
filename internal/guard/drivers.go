package guard

import (
	"path"
	"strings"
	"unicode"
)

// runsKeys are the keys of a repository's git config whose value git runs
// as a command, by section and name (any subsection): the filter, diff and
// merge drivers (nbstripout, git-crypt, a textconv), the file-system
// monitor, credential helpers, editors, pagers and signers. Run from the
// top of the worktree, a script they name there is the command's to change
// unless it is protected.
var runsKeys = map[[2]string]bool{
	{"filter", "clean"}: true, {"filter", "smudge"}: true, {"filter", "process"}: true,
	{"diff", "textconv"}: true, {"diff", "command"}: true, {"diff", "external"}: true,
	{"merge", "driver"}: true, {"core", "fsmonitor"}: true, {"core", "sshcommand"}: true,
	{"core", "editor"}: true, {"core", "pager"}: true, {"core", "askpass"}: true,
	{"sequence", "editor"}: true, {"gpg", "program"}: true, {"credential", "helper"}: true,
	{"interactive", "difffilter"}: true, {"difftool", "cmd"}: true, {"mergetool", "cmd"}: true,
}

// ConfigRuns returns the paths, relative to the top of the worktree or
// absolute, that a repository's config entries make git run or read as
// config: the words of a command-valued key's value that can name a file
// (a module `python -m` runs, as MOD and MOD.py too, since Python looks in
// the working directory first), the shell command of a "!" alias, and the
// files include.path and includeIf.*.path name (relative to the git
// directory, returned as "GITDIR/" joined). A path need not exist: the
// command could make it.
func ConfigRuns(entries []ConfigEntry) []string {
	var out []string
	for _, e := range entries {
		section, name := keyParts(e.Key)
		switch {
		case (section == "include" || section == "includeif") && name == "path":
			if p := e.Value; p != "" && !strings.HasPrefix(p, "~") {
				if !path.IsAbs(p) {
					p = GitDirToken + "/" + p // not cleaned: it may climb out
				}
				out = append(out, p)
			}
		case section == "alias" && strings.HasPrefix(e.Value, "!"):
			out = append(out, commandPaths(e.Value[1:])...)
		case runsKeys[[2]string{section, name}] || section == "pager":
			out = append(out, commandPaths(strings.TrimPrefix(e.Value, "!"))...)
		}
	}
	return out
}

// GitDirToken stands, at the start of a path ConfigRuns returns, for the
// git directory the config lies in.
const GitDirToken = "GITDIR"

// keyParts returns a config key's section and name, without its
// subsection.
func keyParts(key string) (section, name string) {
	section, rest, _ := strings.Cut(key, ".")
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		rest = rest[i+1:]
	}
	return section, rest
}

// commandPaths returns the words of shell command cmd that can name a file
// in the worktree: in each of its commands, the program when it is a path
// (a bare name is looked up on PATH) and the arguments, but no option,
// variable, placeholder (%f) or word with shell syntax. A module python
// runs with -m adds its file and package names.
func commandPaths(cmd string) []string {
	var out []string
	for _, c := range strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune(";|&()\n", r) }) {
		words := strings.FieldsFunc(c, func(r rune) bool {
			return unicode.IsSpace(r) || strings.ContainsRune("<>'\"`", r)
		})
		module := false
		for i, w := range words {
			switch {
			case w == "-m":
				module = true
				continue
			case strings.HasPrefix(w, "-"), strings.ContainsAny(w, "$%=*?[]{}~\\"):
			case module:
				mod := strings.ReplaceAll(w, ".", "/")
				out = append(out, mod, mod+".py")
			case i == 0 && !strings.Contains(w, "/"):
			default:
				out = append(out, path.Clean(w))
			}
			module = false
		}
	}
	return out
}
