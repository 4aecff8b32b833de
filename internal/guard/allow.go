package guard

import (
	"bytes"
	"errors"
	"fmt"
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
	gitIndex          // an index or a split index's shared part: checked
)

// stateFiles are the files at the top of a git directory (or of a linked
// worktree's) that git writes in ordinary work and runs nothing from. Not
// MERGE_RR: git's rerere, run by every commit once rr-cache exists, copies
// each file it names (any path, through any symlink) into rr-cache, where
// the next command could read a file hidden from it.
var stateFiles = []string{
	"HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MODE", "MERGE_MSG",
	"CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "COMMIT_EDITMSG",
	"TAG_EDITMSG", "SQUASH_MSG", "NOTES_MERGE_PARTIAL", "NOTES_MERGE_REF", "description",
	"packed-refs", "shallow", "gc.pid", "gc.log", "locked",
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

// stateChecks are, for each directory where git keeps the state of a
// rebase, am, cherry-pick or revert in progress, the files git resumes
// from that can name something to run or a file to write (see
// badStateFile).
var stateChecks = map[string][]string{
	"rebase-merge": {"git-rebase-todo", "git-rebase-todo.backup", "strategy", "strategy_opts", "gpg_sign_opt"},
	"rebase-apply": {"strategy", "strategy_opts", "apply-opt", "gpg_sign_opt"},
	"sequencer":    {"todo", "opts"},
}

// mergeStrategies are the strategies git carries out itself or with a
// program of its own. For any other name git runs "git-merge-<name>" from
// PATH, or as a path when the name holds a slash.
var mergeStrategies = []string{"ort", "recursive", "resolve", "octopus", "ours", "subtree"}

// mergeOptions are the strategy options (-X) git's own strategies know.
// git hands a strategy its options as "--<option>" arguments, and the
// resolve script passes what it does not know on to `git read-tree`: an
// option "index-output=FILE" there writes FILE.
var mergeOptions = []string{
	"ours", "theirs", "subtree", "patience", "histogram", "diff-algorithm", "ignore-space-change",
	"ignore-all-space", "ignore-space-at-eol", "ignore-cr-at-eol", "renormalize", "no-renormalize",
	"no-renames", "find-renames", "rename-threshold",
}

// badMergeOption says why o (without its dashes) is not one of
// mergeOptions, with or without a value, or returns "".
func badMergeOption(o string) string {
	if name, _, _ := strings.Cut(o, "="); !slices.Contains(mergeOptions, name) {
		return fmt.Sprintf("its merge strategy option %q is not one of git's own", o)
	}
	return ""
}

// badStateFile says why a later `git rebase --continue`, `git am
// --continue` or `git cherry-pick --continue` on the host would run or
// write something of the command's choosing from the file name, holding b,
// of the state directory dir (a key of stateChecks), or returns "": a todo
// list with an exec line, a merge strategy that is not git's own, options
// for `git apply` beyond those `git am` records (--build-fake-ancestor=FILE
// writes FILE), a merge strategy option git's own strategies do not know,
// a signing option that is not -S.
func badStateFile(dir, name string, b []byte) string {
	switch {
	case name == "git-rebase-todo" || name == "git-rebase-todo.backup" || name == "todo":
		if hasExec(b) {
			return "its todo list runs commands (exec)"
		}
	case name == "strategy":
		if s := strings.TrimSuffix(string(b), "\n"); !slices.Contains(mergeStrategies, s) {
			return fmt.Sprintf("its merge strategy %q is not one of git's own", s)
		}
	case name == "opts":
		es, err := ParseConfig(b)
		if err != nil {
			return "its options cannot be checked: " + err.Error()
		}
		for _, e := range es {
			switch {
			case e.Key == "options.strategy" && !slices.Contains(mergeStrategies, e.Value):
				return fmt.Sprintf("its merge strategy %q is not one of git's own", e.Value)
			case e.Key == "options.strategy-option":
				if bad := badMergeOption(e.Value); bad != "" {
					return bad
				}
			}
		}
	case name == "strategy_opts":
		args, err := sqDequote(strings.TrimSpace(string(b)))
		if err != nil {
			return "its merge strategy options cannot be checked: " + err.Error()
		}
		for _, a := range args {
			o, ok := strings.CutPrefix(a, "--")
			if !ok {
				return fmt.Sprintf("its merge strategy option %q is not one of git's own", a)
			}
			if bad := badMergeOption(o); bad != "" {
				return bad
			}
		}
	case name == "apply-opt":
		args, err := sqDequote(strings.TrimSpace(string(b)))
		if err != nil {
			return "its options for git apply cannot be checked: " + err.Error()
		}
		for _, a := range args {
			if !amApplyOption(a) {
				return fmt.Sprintf("its options for git apply hold %q", a)
			}
		}
	case name == "gpg_sign_opt":
		if s := strings.TrimSpace(string(b)); s != "" && !strings.HasPrefix(s, "-S") {
			return fmt.Sprintf("its signing option %q is not -S", s)
		}
	}
	return ""
}

// amApplyOption reports whether a is one of the options `git am` passes
// through to `git apply` and records.
func amApplyOption(a string) bool {
	switch a {
	case "--ignore-space-change", "--ignore-whitespace", "--reject":
		return true
	}
	for _, p := range []string{"--whitespace=", "--directory=", "--exclude=", "--include=", "-C", "-p"} {
		if strings.HasPrefix(a, p) && !strings.HasPrefix(a[len(p):], "-") {
			return true
		}
	}
	return false
}

// sqDequote splits what git's sq_quote_argv writes: arguments in single
// quotes, separated by spaces; a quote or ! inside one closes the quotes,
// follows a backslash and opens them again.
func sqDequote(s string) ([]string, error) {
	var out []string
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out, nil
		}
		if s[0] != '\'' {
			return nil, errors.New("an unquoted argument")
		}
		s = s[1:]
		var b strings.Builder
		for {
			i := strings.IndexByte(s, '\'')
			if i < 0 {
				return nil, errors.New("an unterminated quote")
			}
			b.WriteString(s[:i])
			s = s[i+1:]
			if len(s) >= 3 && s[0] == '\\' && (s[1] == '\'' || s[1] == '!') && s[2] == '\'' {
				b.WriteByte(s[1])
				s = s[3:]
				continue
			}
			break
		}
		if s != "" && s[0] != ' ' {
			return nil, errors.New("text after a closing quote")
		}
		out = append(out, b.String())
	}
}

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
		if c == plain || c == todo || c == gitIndex {
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
		case name == "index", strings.HasPrefix(name, "sharedindex."):
			return gitIndex
		case slices.Contains(stateFiles, name), strings.HasPrefix(name, "BISECT_"):
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

// hasExec reports whether a todo list has an exec line. git reads the
// list as a C string: a NUL ends it, and ends the command word before it
// ("exec\x00" is an exec line).
func hasExec(b []byte) bool {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "x" || f[0] == "exec") {
			return true
		}
	}
	return false
}
