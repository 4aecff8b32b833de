package guard

import "bytes"

// git refuses into an index, on every platform by default
// (core.protectNTFS), the names NTFS would take for .git and, for a
// symlink, .gitmodules: trailing spaces and periods, an alternate data
// stream (":..."), a short 8.3 name ("git~1", "gitmod~1", "gi7eba~1").
// It checks them at the start of each component and after each
// backslash. badIndexPath refuses them too, so that it lets in nothing
// git's verify_path would not.

// ntfsBad says whether the name that starts p, a suffix of an entry's
// path of mode, is an NTFS form of .git, or of .gitmodules for a symlink.
func ntfsBad(p []byte, mode uint32) bool {
	return ntfsDotGit(p) || mode&0o170000 == 0o120000 && ntfsDotGitmodules(p)
}

// ntfsDotGit is git's is_ntfs_dotgit.
func ntfsDotGit(p []byte) bool {
	var rest []byte
	switch {
	case len(p) >= 4 && p[0] == '.' && asciiFold(p[1:4], "git"):
		rest = p[4:]
	case len(p) >= 5 && asciiFold(p[:3], "git") && p[3] == '~' && p[4] == '1':
		rest = p[5:]
	default:
		return false
	}
	i := bytes.IndexFunc(rest, func(r rune) bool { return r != ' ' && r != '.' })
	return i < 0 || rest[i] == '/' || rest[i] == '\\' || rest[i] == ':'
}

// ntfsDotGitmodules is git's is_ntfs_dotgitmodules: ".gitmodules",
// "gitmod~1" to "~4", or a fallback short name "gi7eba~N", then only
// spaces and periods to a colon or the end of the whole path.
func ntfsDotGitmodules(p []byte) bool {
	onlyDots := func(rest []byte) bool {
		i := bytes.IndexFunc(rest, func(r rune) bool { return r != ' ' && r != '.' })
		return i < 0 || rest[i] == ':'
	}
	switch {
	case len(p) >= 11 && p[0] == '.' && asciiFold(p[1:11], "gitmodules"):
		return onlyDots(p[11:])
	case len(p) >= 8 && asciiFold(p[:6], "gitmod") && p[6] == '~' && '1' <= p[7] && p[7] <= '4':
		return onlyDots(p[8:])
	}
	// The fallback short name: up to six bytes of "gi7eba", a tilde, a
	// digit 1-9, digits, eight bytes in all.
	i, tilde := 0, false
	for ; i < 8; i++ {
		switch {
		case i >= len(p):
			return false
		case tilde:
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		case p[i] == '~':
			i++
			if i >= len(p) || p[i] < '1' || p[i] > '9' {
				return false
			}
			tilde = true
		case i >= 6 || lowerASCII(p[i]) != "gi7eba"[i]:
			return false
		}
	}
	return onlyDots(p[i:])
}

// asciiFold reports whether a equals b, ASCII letters in any case.
func asciiFold(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lowerASCII(a[i]) != b[i] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
