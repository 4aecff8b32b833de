package guard

import (
	"slices"
	"strings"
)

// What a path inside a git directory is to the merge.
type class int

const (
	dropped     class = iota
	plain             // copied as is
	config            // merged only if every changed key is allowed
	wtGitdir          // worktrees/<name>/gitdir: validated
	wtCommondir       // worktrees/<name>/commondir: must be ../..
	todo              // a sequencer's todo list: no exec lines
)

// stateFiles are the files at the top of a git directory (or of a linked
// worktree's) that git writes in ordinary work and runs nothing from.
var stateFiles = []string{
	"HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MODE", "MERGE_MSG", "MERGE_RR",
	"CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "COMMIT_EDITMSG",
	"TAG_EDITMSG", "SQUASH_MSG", "NOTES_MERGE_PARTIAL", "NOTES_MERGE_REF", "description",
	"index", "packed-refs", "shallow", "gc.pid", "gc.log", "locked",
}

// stateDirs hold only data: objects, refs, logs and the state of a merge,
// rebase, cherry-pick, revert or stash in progress.
var stateDirs = []string{
	"objects", "refs", "logs", "rr-cache", "reftable", "rebase-merge", "rebase-apply",
	"sequencer", "lost-found", "info",
}

// infoFiles are the files of info/ that are allowed.
var infoFiles = []string{"exclude", "refs", "sparse-checkout", "attributes"}

// todoFiles are lists a later `git rebase --continue` would run exec lines
// from.
var todoFiles = []string{"rebase-merge/git-rebase-todo", "rebase-merge/git-rebase-todo.backup", "sequencer/todo"}

// classify says what rel, a slash-separated path inside a git directory,
// is. Submodules' git directories (modules/<name>/) follow the same rules;
// linked worktrees' (worktrees/<name>/) have no config of their own.
func classify(rel string) class {
	parts := strings.Split(rel, "/")
	return classifyParts(parts, true)
}

// readByGit are names git reads code or redirections from when they sit
// at the top of a git directory. A submodule's name may hold slashes, so
// under modules/ they are refused at any depth: "modules/a/refs/hooks/x" is
// a ref of module "a" but a hook of module "a/refs".
var readByGit = []string{"hooks", "config", "config.worktree", "commondir", "alternates", "gitdir"}

func classifyParts(parts []string, top bool) class {
	if len(parts) >= 3 && parts[0] == "modules" && top {
		c := classifyParts(parts[2:], true)
		if c == plain || c == todo {
			for _, p := range parts[1 : len(parts)-1] {
				if slices.Contains(readByGit, p) {
					return dropped
				}
			}
			if slices.Contains(readByGit, parts[len(parts)-1]) {
				return dropped
			}
		}
		return c
	}
	if len(parts) >= 3 && parts[0] == "worktrees" && top {
		switch rest := parts[2:]; {
		case len(rest) == 1 && rest[0] == "gitdir":
			return wtGitdir
		case len(rest) == 1 && rest[0] == "commondir":
			return wtCommondir
		default:
			return classifyParts(rest, false)
		}
	}
	name := parts[0]
	if len(parts) == 1 {
		switch {
		case name == "config" && top:
			return config
		case slices.Contains(stateFiles, name), strings.HasPrefix(name, "BISECT_"),
			strings.HasPrefix(name, "sharedindex."):
			return plain
		}
		return dropped
	}
	if !slices.Contains(stateDirs, name) {
		return dropped
	}
	joined := strings.Join(parts, "/")
	switch {
	case name == "info":
		if len(parts) == 2 && slices.Contains(infoFiles, parts[1]) {
			return plain
		}
		return dropped
	case name == "objects" && len(parts) == 3 && parts[1] == "info" &&
		(parts[2] == "alternates" || parts[2] == "http-alternates"):
		return dropped // would read objects from elsewhere
	case slices.Contains(todoFiles, joined):
		return todo
	}
	for _, p := range parts {
		if strings.HasSuffix(p, ".lock") {
			return dropped // left behind by a killed git: it would block git on the host
		}
	}
	return plain
}

// dirAllowed says whether a directory at rel may hold allowed files.
func dirAllowed(rel string) bool {
	parts := strings.Split(rel, "/")
	for {
		switch {
		case len(parts) <= 2 && (parts[0] == "modules" || parts[0] == "worktrees"):
			return true
		case len(parts) >= 3 && parts[0] == "modules":
			parts = parts[2:]
			continue
		case len(parts) >= 3 && parts[0] == "worktrees":
			parts = parts[2:]
			if parts[0] == "modules" || parts[0] == "worktrees" {
				return false
			}
			continue
		}
		return slices.Contains(stateDirs, parts[0]) && (parts[0] != "info" || len(parts) == 1)
	}
}

// hasExec reports whether a todo list has an exec line.
func hasExec(b []byte) bool {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "x" || f[0] == "exec") {
			return true
		}
	}
	return false
}
