package hooks

import "bytes"

// Checks that separate real tokens from placeholders and prose. Real keys
// are random: they mix letter cases and digits and rarely repeat a byte,
// while "sk-your-key-here" or "ghp_xxxx…" do not.

// minDistinct is how many different bytes a token body must hold. A random
// 20-byte body over 64 symbols has about 17.
const minDistinct = 10

// looksRandom reports whether body mixes at least two of lower case, upper
// case and digits and uses enough different bytes.
func looksRandom(body []byte) bool {
	var seen [256]bool
	distinct, classes := 0, 0
	var lower, upper, digit bool
	for _, c := range body {
		if !seen[c] {
			seen[c] = true
			distinct++
		}
		switch {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		}
	}
	for _, b := range []bool{lower, upper, digit} {
		if b {
			classes++
		}
	}
	return classes >= 2 && distinct >= minDistinct
}

// randomWithDigit is looksRandom plus a digit, for prefixes that also start
// ordinary words ("BSAFileHandler…"). A random 28-byte key lacks a digit
// with odds of about one in a hundred: the price of not stopping agents on
// identifiers.
func randomWithDigit(body []byte) bool {
	for _, c := range body {
		if '0' <= c && c <= '9' {
			return looksRandom(body)
		}
	}
	return false
}

// openAIShape accepts the known forms of OpenAI keys: a project, service
// account, admin or default-project key ("proj-", "svcacct-", "admin-",
// "None-"), any key carrying the "T3BlbkFJ" marker (base64 of "OpenAI"), and
// legacy keys of exactly 48 letters and digits. A bare "sk-" followed by
// random bytes is too common a start for a base64url blob to accept.
func openAIShape(body []byte) bool {
	if !looksRandom(body) {
		return false
	}
	for _, p := range openAIKinds {
		if bytes.HasPrefix(body, p) {
			return true
		}
	}
	if bytes.Contains(body, []byte("T3BlbkFJ")) {
		return true
	}
	if len(body) != 48 {
		return false
	}
	for _, c := range body {
		if c == '-' || c == '_' {
			return false
		}
	}
	return true
}

var openAIKinds = [][]byte{[]byte("proj-"), []byte("svcacct-"), []byte("admin-"), []byte("None-")}

// discordShape cheaply rules out most words starting with M, N or O before
// the regexp runs: the first part is 24 to 28 token bytes and a dot.
func discordShape(b []byte) bool {
	n := 0
	for n < len(b) && n <= 28 && tokenByte[b[n]] {
		n++
	}
	return n >= 24 && n <= 28 && n < len(b) && b[n] == '.'
}

// discordUserID checks that the first part of the token is the base64 of a
// numeric user id, which no dotted identifier or file name is.
func discordUserID(tok []byte) bool {
	dot := 0
	for dot < len(tok) && tok[dot] != '.' {
		dot++
	}
	var buf [32]byte
	id := decodeBase64(buf[:0], tok[:dot])
	if len(id) < 15 {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// telegramStart walks back from the ":A" at data[at] over the bot id, 5 to
// 16 digits.
func telegramStart(data []byte, at int) int {
	i := at
	for i > 0 && at-i <= 16 && '0' <= data[i-1] && data[i-1] <= '9' {
		i--
	}
	if n := at - i; n < 5 || n > 16 {
		return -1
	}
	return i
}

// telegramSecret applies looksRandom to the part after the colon.
func telegramSecret(tok []byte) bool {
	for i, c := range tok {
		if c == ':' {
			return looksRandom(tok[i+1:])
		}
	}
	return false
}
