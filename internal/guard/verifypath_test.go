package guard

import "bytes"

// verifyPath is git's verify_path (read-cache.c, git 2.39) as git runs it
// on Linux with its defaults: core.protectNTFS on, core.protectHFS off. It
// is the fuzz targets' oracle, ported line by line rather than shared with
// badIndexPath, so that the two can disagree. p is taken as git takes a
// C string: up to its first NUL.
func verifyPath(p []byte, mode uint32) bool {
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	at := func(i int) byte { // the C string's byte i, NUL past its end
		if i < len(p) {
			return p[i]
		}
		return 0
	}
	isDir := mode&0o170000 == 0o040000
	isLink := mode&0o170000 == 0o120000
	i := 0
	var c byte
	inside := true
	for {
		if !inside {
			if c == 0 {
				return true
			}
		}
		if inside || c == '/' {
			inside = false
			if isNTFSDotGit(p[i:]) {
				return false
			}
			if isLink && isNTFSDotGitmodules(p[i:]) {
				return false
			}
			c = at(i)
			i++
			if c == '.' && !verifyDotfile(p[min(i, len(p)):], mode) || c == '/' {
				return false
			}
			if c == 0 {
				return isDir
			}
		} else if c == '\\' {
			if isNTFSDotGit(p[min(i, len(p)):]) {
				return false
			}
			if isLink && isNTFSDotGitmodules(p[min(i, len(p)):]) {
				return false
			}
		}
		c = at(i)
		i++
	}
}

func verifyDotfile(rest []byte, mode uint32) bool {
	at := func(i int) byte {
		if i < len(rest) {
			return rest[i]
		}
		return 0
	}
	if at(0) == 0 || at(0) == '/' {
		return false
	}
	switch at(0) {
	case 'g', 'G':
		if at(1) != 'i' && at(1) != 'I' || at(2) != 't' && at(2) != 'T' {
			break
		}
		if at(3) == 0 || at(3) == '/' {
			return false
		}
		if mode&0o170000 == 0o120000 {
			r := rest[3:]
			if len(r) >= 7 && asciiFold(r[:7], "modules") && (len(r) == 7 || r[7] == '/') {
				return false
			}
		}
	case '.':
		if at(1) == 0 || at(1) == '/' {
			return false
		}
	}
	return true
}

// isNTFSDotGit is git's is_ntfs_dotgit: ".git" or "git~1", in any case,
// followed by spaces and periods up to a separator, a colon or the end.
func isNTFSDotGit(name []byte) bool {
	at := func(i int) byte {
		if i < len(name) {
			return name[i]
		}
		return 0
	}
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	i := 0
	switch c := at(0); {
	case c == '.':
		if lower(at(1)) != 'g' || lower(at(2)) != 'i' || lower(at(3)) != 't' {
			return false
		}
		i = 4
	case lower(c) == 'g':
		if lower(at(1)) != 'i' || lower(at(2)) != 't' || at(3) != '~' || at(4) != '1' {
			return false
		}
		i = 5
	default:
		return false
	}
	for ; ; i++ {
		c := at(i)
		if c == 0 || c == '/' || c == '\\' || c == ':' {
			return true
		}
		if c != '.' && c != ' ' {
			return false
		}
	}
}

// isNTFSDotGitmodules is git's is_ntfs_dotgitmodules.
func isNTFSDotGitmodules(name []byte) bool {
	return isNTFSDotGeneric(name, "gitmodules", "gi7eba")
}

func isNTFSDotGeneric(name []byte, dotgit, shortPrefix string) bool {
	at := func(i int) byte {
		if i < len(name) {
			return name[i]
		}
		return 0
	}
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	spacesAndPeriods := func(i int) bool {
		for ; ; i++ {
			c := at(i)
			if c == 0 || c == ':' {
				return true
			}
			if c != ' ' && c != '.' {
				return false
			}
		}
	}
	// strncasecmp(a, b, n): equal up to n bytes or up to a common NUL.
	ncaseEq := func(from int, s string) bool {
		for k := range len(s) {
			c := at(from + k)
			if lower(c) != s[k] {
				return false
			}
		}
		return true
	}
	if at(0) == '.' && ncaseEq(1, dotgit) {
		return spacesAndPeriods(len(dotgit) + 1)
	}
	if ncaseEq(0, dotgit[:6]) && at(6) == '~' && at(7) >= '1' && at(7) <= '4' {
		return spacesAndPeriods(8)
	}
	sawTilde := false
	for i := 0; i < 8; i++ {
		c := at(i)
		switch {
		case c == 0:
			return false
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if at(i) < '1' || at(i) > '9' {
				return false
			}
			sawTilde = true
		case i >= 6:
			return false
		case c&0x80 != 0:
			return false
		case lower(c) != shortPrefix[i]:
			return false
		}
	}
	return spacesAndPeriods(8)
}
