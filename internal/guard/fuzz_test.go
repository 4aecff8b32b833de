package guard

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The seed corpus of each target (testdata/fuzz, real files git wrote:
// scripts/fuzz-corpus.sh) runs in every `go test`; `make fuzz` explores.

// FuzzIndexPath: badIndexPath lets in no path git's verify_path refuses.
func FuzzIndexPath(f *testing.F) {
	for _, p := range []string{"a", "a/b", ".git", "a/.GIT/x", "git~1", ".git ", "a\\.git", ".gitmodules", "a/", "..", ".g", "x/.gitmodules/y", "GI7EBA~1"} {
		for _, m := range []uint32{modeFile, modeLink, modeDir} {
			f.Add([]byte(p), m)
		}
	}
	f.Fuzz(func(t *testing.T, p []byte, mode uint32) {
		if len(p) == 0 {
			return // a split index's entry: handled by checkIndex
		}
		if badIndexPath(p, mode) == "" {
			require.True(t, verifyPath(p, mode), "%q, mode %o: accepted, git's verify_path refuses it", p, mode)
		}
	})
}

// FuzzCheckIndex: no index panics the check, and an index it accepts,
// read entry by entry as git's create_from_disk reads it, holds no path
// verify_path refuses.
func FuzzCheckIndex(f *testing.F) {
	f.Add(buildIndex(2, 1, indexEntries(2, []indexEntry{{"a/b", modeFile}})), false)
	f.Add(buildIndex(4, 2, indexEntries(4, []indexEntry{{"a/b", modeFile}, {"a/c", modeLink}})), false)
	f.Fuzz(func(t *testing.T, b []byte, sha256 bool) {
		hashSize := 20
		if sha256 {
			hashSize = 32
		}
		if checkIndex(b, hashSize) != "" {
			return
		}
		names, ok := gitIndexNames(b, hashSize)
		require.True(t, ok, "accepted, but git's reader cannot read its entries")
		for _, n := range names {
			if len(n.name) > 0 {
				require.True(t, verifyPath(n.name, n.mode), "accepted an entry %q (mode %o) git's verify_path refuses", n.name, n.mode)
			}
		}
	})
}

type gitEntry struct {
	name []byte
	mode uint32
}

// gitIndexNames reads the entries of index b in order the way git's
// create_from_disk does (read-cache.c), which for version 4 takes a
// name's length from its flags when they hold it.
func gitIndexNames(b []byte, hashSize int) ([]gitEntry, bool) {
	if len(b) < 12+hashSize {
		return nil, false
	}
	end := len(b) - hashSize
	version := binary.BigEndian.Uint32(b[4:])
	n := binary.BigEndian.Uint32(b[8:])
	off := 12
	var out []gitEntry
	var prev []byte
	for ; n > 0; n-- {
		nameAt := off + 40 + hashSize + 2
		if nameAt > end {
			return nil, false
		}
		mode := binary.BigEndian.Uint32(b[off+24:])
		flags := binary.BigEndian.Uint16(b[nameAt-2:])
		if flags&0x4000 != 0 {
			nameAt += 2
		}
		if nameAt > end {
			return nil, false
		}
		l := int(flags & 0xfff)
		var name []byte
		if version == 4 {
			strip, k := uvarintGit(b[nameAt:end])
			copyLen := 0 // the first entry has no previous one
			if len(out) > 0 {
				if k == 0 || strip > uint64(len(prev)) {
					return nil, false
				}
				copyLen = len(prev) - int(strip)
			} else if k == 0 {
				return nil, false
			}
			s := b[nameAt+k : end]
			if l == 0xfff {
				z := bytes.IndexByte(s, 0)
				if z < 0 {
					return nil, false
				}
				l = z + copyLen
			}
			if l < copyLen || l-copyLen+1 > len(s) {
				return nil, false
			}
			name = append(slices.Clip(prev[:copyLen]), s[:l-copyLen]...)
			off = nameAt + k + l - copyLen + 1
		} else {
			s := b[nameAt:end]
			if l == 0xfff {
				l = bytes.IndexByte(s, 0)
			}
			if l < 0 || l >= len(s) {
				return nil, false
			}
			name = s[:l]
			off = off + (nameAt-off+l+8)&^7
		}
		if off > end {
			return nil, false
		}
		out = append(out, gitEntry{name, mode})
		prev = name
	}
	return out, true
}

// uvarintGit is git's decode_varint.
func uvarintGit(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 127)
	k := 1
	for c&128 != 0 {
		if k >= len(b) {
			return 0, 0
		}
		v++
		if v == 0 || v&^(^uint64(0)>>7) != 0 {
			return 0, 0 // overflow
		}
		c = b[k]
		k++
		v = v<<7 + uint64(c&127)
	}
	return v, k
}

// FuzzParseConfig: a config ParseConfig accepts means to git what it
// means here: `git config --list` reads the same keys and values.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://x/y\n",
		"[a]\nb\nc = \"q\\\"uoted\" ; comment\n",
		"[a \"s\\\\ub\"]\n  k = v  # x\n",
	} {
		f.Add([]byte(s))
	}
	git, err := exec.LookPath("git")
	if err != nil {
		f.Skip("git is not installed: it is the oracle")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := ParseConfig(b)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		p := filepath.Join(dir, "config")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		cmd := exec.Command(git, "config", "--file", p, "--no-includes", "-z", "--list")
		cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin"}
		out, err := cmd.Output()
		require.NoError(t, err, "accepted %q, which git cannot read", b)
		var got []ConfigEntry
		for _, rec := range bytes.Split(out, []byte{0}) {
			if len(rec) == 0 {
				continue
			}
			k, v, hasValue := bytes.Cut(rec, []byte{'\n'})
			got = append(got, ConfigEntry{Key: string(k), Value: string(v), Bool: !hasValue})
		}
		require.Equal(t, got, entries, "git reads %q otherwise", b)
	})
}

// FuzzStateFile: no state file panics the check, and one it accepts
// holds no exec line for git's todo parser, and options that git's
// sq_dequote splits into the same arguments.
func FuzzStateFile(f *testing.F) {
	for _, s := range []struct{ name, b string }{
		{"git-rebase-todo", "pick 1234567 subject\n# exec make\n"},
		{"git-rebase-todo", "exec make\n"},
		{"strategy", "ort\n"},
		{"strategy_opts", "'--ours' '--rename-threshold=50'"},
		{"apply-opt", "'--whitespace=fix' '-C1'"},
		{"opts", "[options]\n\tstrategy = ort\n\tstrategy-option = theirs\n"},
		{"gpg_sign_opt", "-SABCD"},
	} {
		f.Add(s.name, []byte(s.b))
	}
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		if badStateFile("rebase-merge", name, b) != "" {
			return
		}
		switch name {
		case "git-rebase-todo", "git-rebase-todo.backup", "todo":
			require.False(t, gitTodoExec(b), "accepted a todo list git runs a command from: %q", b)
		case "strategy_opts", "apply-opt":
			mine, err := sqDequote(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			if gits, ok := gitSqDequote(gitTrim(b)); ok {
				require.Equal(t, gits, mine, "git splits %q otherwise", b)
			}
		}
	})
}

// gitTodoExec reports whether git's parse_insn_buffer (sequencer.c) finds
// an exec command in a todo list: the buffer ends at a NUL; each line,
// left-trimmed of spaces and tabs, that is not empty or a comment opens
// with a command, "exec" or "x" followed by a space, tab, CR, LF or the
// end.
func gitTodoExec(b []byte) bool {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		line = bytes.TrimLeft(line, " \t")
		if len(line) == 0 || line[0] == '\r' || line[0] == '#' {
			continue
		}
		for _, cmd := range []string{"exec", "x"} {
			rest, ok := bytes.CutPrefix(line, []byte(cmd))
			if ok && (len(rest) == 0 || strings.IndexByte(" \t\r", rest[0]) >= 0) {
				return true
			}
		}
	}
	return false
}

// gitTrim is git's strbuf_trim on a C string.
func gitTrim(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return bytes.Trim(b, " \t\n\r")
}

// gitSqDequote is git's sq_dequote_to_strvec (quote.c).
func gitSqDequote(s []byte) ([]string, bool) {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	var out []string
	if len(s) == 0 {
		return out, true
	}
	i := 0
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	for {
		if at(i) != '\'' {
			return nil, false
		}
		var arg []byte
		done := false
		for !done {
			i++
			c := at(i)
			if c == 0 {
				return nil, false
			}
			if c != '\'' {
				arg = append(arg, c)
				continue
			}
			i++
			switch at(i) {
			case 0:
				return append(out, string(arg)), true
			case '\\':
				if (at(i+1) == '\'' || at(i+1) == '!') && at(i+2) == '\'' {
					arg = append(arg, at(i+1))
					i += 2
					continue
				}
			}
			done = true
		}
		out = append(out, string(arg))
		if !isSpace(at(i)) {
			return nil, false
		}
		for isSpace(at(i)) {
			i++
		}
	}
}
