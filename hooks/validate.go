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
	classes := 0
	var lower, upper, digit bool
	for _, c := range body {
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
	return classes >= 2 && distinct(body) >= minDistinct
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

// openAIMarked accepts the OpenAI key forms that carry a marker (a kind
// or "T3BlbkFJ"); a legacy key glued to a word is too like "task-…".
func openAIMarked(body []byte) bool {
	if !openAIShape(body) {
		return false
	}
	for _, p := range openAIKinds {
		if bytes.HasPrefix(body, p) {
			return true
		}
	}
	return bytes.Contains(body, []byte("T3BlbkFJ"))
}

// awsKeyID checks the 16 bytes after AKIA or ASIA: base32 with no digit
// in about one key in thirty, so looksRandom's classes do not apply;
// enough different bytes, and not AWS's documented example.
func awsKeyID(body []byte) bool {
	return distinct(body) >= 8 && !bytes.Contains(body, []byte("EXAMPLE"))
}

// awsSecret checks a secret access key: random, and not the example of
// AWS's documentation (…EXAMPLEKEY).
func awsSecret(body []byte) bool {
	return looksRandom(body) && !bytes.Contains(body, []byte("EXAMPLE"))
}

func distinct(body []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range body {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}

// awsSecretStart finds the value after the name of an AWS secret access
// key, given the index of "ccess" in it: secret_access_key,
// SecretAccessKey, AWS_SECRET_ACCESS_KEY, secret-access-key, followed by
// quotes, blanks and one ':' or '=' (or "=>"). It returns the value's
// index, or -1.
func awsSecretStart(data []byte, at int) int {
	i := at - 1
	if i < 0 || (data[i] != 'a' && data[i] != 'A') {
		return -1
	}
	if i > 0 && (data[i-1] == '_' || data[i-1] == '-') {
		i--
	}
	if i < 6 || !bytes.EqualFold(data[i-6:i], []byte("secret")) {
		return -1
	}
	j := at + len("ccess")
	if j < len(data) && (data[j] == '_' || data[j] == '-') {
		j++
	}
	if j+3 > len(data) || !bytes.EqualFold(data[j:j+3], []byte("key")) {
		return -1
	}
	j += 3
	seps := 0
	for n := 0; j < len(data) && n < 8; j, n = j+1, n+1 {
		switch data[j] {
		case ':', '=':
			seps++
			continue
		case ' ', '\t', '"', '\'', '>':
			continue
		}
		break
	}
	if seps != 1 {
		return -1
	}
	return j
}

// after returns a back function for a value that follows its anchor.
func after(anchor string) func(data []byte, at int) int {
	return func(data []byte, at int) int { return at + len(anchor) }
}

// mixedCase is looksRandom with at least seven upper and seven lower
// case letters, for Hugging Face tokens: 34 random letters hold about 17
// of each, a CamelCase identifier far fewer capitals.
func mixedCase(body []byte) bool {
	upper, lower := 0, 0
	for _, c := range body {
		switch {
		case 'a' <= c && c <= 'z':
			lower++
		case 'A' <= c && c <= 'Z':
			upper++
		}
	}
	return upper >= 7 && lower >= 7 && looksRandom(body)
}

// jwtHeader checks that a JWT's header, "eyJ" and body up to the first
// dot, decodes to a JSON object naming an algorithm other than none.
func jwtHeader(body []byte) bool {
	dot := bytes.IndexByte(body, '.')
	if dot < 0 || dot > 1024 {
		return false
	}
	var src [3 + 1024]byte
	var dst [800]byte
	h := decodeBase64(dst[:0], append(append(src[:0], "eyJ"...), body[:dot]...))
	return bytes.Contains(h, []byte(`"alg"`)) && !bytes.Contains(h, []byte(`"none"`))
}
