package hooks

import (
	"bytes"
	"regexp"
	"sync"
)

// Pattern names, as reported in [Finding].Pattern.
const (
	PatternPrivateKey = "private-key"
	PatternAnthropic  = "anthropic"
	PatternOpenRouter = "openrouter"
	PatternOpenAI     = "openai"
	PatternGitHub     = "github"
	PatternGoogle     = "google"
	PatternSlackBot   = "slack-bot"
	PatternSlackApp   = "slack-app"
	PatternDiscord    = "discord"
	PatternTelegram   = "telegram"
	PatternBrave      = "brave"
)

// pattern describes one kind of secret. Matching is anchored at a candidate
// position picked by the first byte (see matcher), so a regexp only ever
// sees a short window and never the whole input.
type pattern struct {
	name string
	// prefix is a literal every match starts with. Empty when first lists
	// the possible first bytes instead, or when anchor is set.
	prefix string
	first  string
	// anchor is a literal inside every match, for patterns whose first
	// bytes are too common to dispatch on (a Telegram token starts with
	// any digit, but ":A" is rare); back finds the start from the
	// anchor's index, or returns -1.
	anchor string
	back   func(data []byte, at int) int
	// re is matched at the candidate position; it must start with ^.
	re string
	// window bounds the bytes re sees, which keeps a failing candidate
	// cheap however long the input is.
	window int
	// deny lists bytes that may not come right before a match: a token
	// glued to letters or sitting inside a base64 blob is not a token.
	deny *[256]bool
	// closed patterns have a fixed length: a token byte right after the
	// match means a longer string, not this secret.
	closed bool
	// pre is an optional cheap test run before the regexp.
	pre func(b []byte) bool
	// valid checks the match without its literal prefix; it rejects
	// placeholders such as "sk-ant-xxxx…" and prose.
	valid func(body []byte) bool
	// extend may lengthen a match past what re saw (a PEM block's body).
	extend func(data []byte, end int) int
}

// patterns in priority order: when two start at the same byte the first one
// wins, so "sk-ant-…" is Anthropic and never also OpenAI.
var patterns = []pattern{
	{
		name:   PatternPrivateKey,
		prefix: "-----BEGIN ",
		// The header alone shows up in code that parses keys; require the
		// start of a body. Separators may be JSON-escaped (\n) because tool
		// arguments are JSON.
		re:     `^-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:\s|\\[rn])+(?:[A-Za-z][A-Za-z0-9-]*: ?[^\r\n\\]*(?:\s|\\[rn])+)*[A-Za-z0-9+/=]{32}`,
		window: 512,
		extend: pemEnd,
	},
	{name: PatternAnthropic, prefix: "sk-ant-", re: `^sk-ant-[A-Za-z0-9_-]{20,}`, window: 512, deny: &tokenDeny, valid: looksRandom},
	{name: PatternOpenRouter, prefix: "sk-or-", re: `^sk-or-[A-Za-z0-9_-]{20,}`, window: 512, deny: &tokenDeny, valid: looksRandom},
	{name: PatternOpenAI, prefix: "sk-", re: `^sk-[A-Za-z0-9_-]{20,}`, window: 512, deny: &tokenDeny, valid: openAIShape},
	{
		name:   PatternGitHub,
		prefix: "g",
		re:     `^g(?:h[pousr]_[A-Za-z0-9]{36,}|ithub_pat_[A-Za-z0-9_]{40,})`,
		window: 512, deny: &tokenDeny, valid: looksRandom,
	},
	{name: PatternGoogle, prefix: "AIza", re: `^AIza[A-Za-z0-9_-]{35}`, window: 64, deny: &tokenDeny, closed: true, valid: looksRandom},
	{name: PatternSlackBot, prefix: "xoxb-", re: `^xoxb-[0-9]{6,}-[A-Za-z0-9-]{16,}`, window: 512, deny: &tokenDeny, valid: looksRandom},
	{name: PatternSlackApp, prefix: "xapp-", re: `^xapp-[0-9]+-[A-Za-z0-9-]{20,}`, window: 512, deny: &tokenDeny, valid: looksRandom},
	{
		name:  PatternDiscord,
		first: "MNO",
		// user id (base64) . timestamp . HMAC
		re:     `^[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}`,
		window: 96, deny: &tokenDeny, pre: discordShape, valid: discordUserID,
	},
	{
		name:   PatternTelegram,
		anchor: ":A",
		back:   telegramStart,
		// bot id : secret; the secret part starts with "A".
		re:     `^[0-9]{5,16}:A[A-Za-z0-9_-]{34}`,
		window: 64, deny: &digitDeny, closed: true, valid: telegramSecret,
	},
	{name: PatternBrave, prefix: "BSA", re: `^BSA[A-Za-z0-9_-]{20,40}`, window: 64, deny: &tokenDeny, closed: true, valid: randomWithDigit},
}

var (
	// tokenDeny: letters, digits and the base64 punctuation of both
	// alphabets. A token found right after one of these is most likely a
	// slice of a longer random string.
	tokenDeny = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
	// digitDeny: Telegram tokens often follow "bot" in API URLs, so only
	// a longer number rules them out.
	digitDeny = byteSet("0123456789")
	tokenByte = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
)

func byteSet(s string) (set [256]bool) {
	for i := 0; i < len(s); i++ {
		set[s[i]] = true
	}
	return set
}

// compiled is a pattern with its regexp.
type compiled struct {
	*pattern
	re          *regexp.Regexp
	prefixBytes []byte
	anchorBytes []byte
}

// matcher dispatches on the first byte of a candidate so that most bytes
// cost one table lookup.
type matcher struct {
	byFirst  [256][]*compiled
	anchored []*compiled
	// first classes each byte by the candidates starting with it: 0 for
	// none, otherwise an index into denied, which holds the bytes that
	// rule out every one of them when they come just before.
	first  [256]uint8
	denied [][256]bool
}

// loadMatcher compiles the patterns on first use rather than in init: every
// program importing this package would otherwise pay for it at start-up,
// including the re-executed sandbox init.
var loadMatcher = sync.OnceValue(func() *matcher {
	m := &matcher{}
	for i := range patterns {
		p := &patterns[i]
		c := &compiled{pattern: p, re: regexp.MustCompile(p.re), prefixBytes: []byte(p.prefix), anchorBytes: []byte(p.anchor)}
		if p.anchor != "" {
			m.anchored = append(m.anchored, c)
			continue
		}
		first := p.first
		if p.prefix != "" {
			first = p.prefix[:1]
		}
		for j := 0; j < len(first); j++ {
			m.byFirst[first[j]] = append(m.byFirst[first[j]], c)
		}
	}
	m.denied = [][256]bool{{}}
	for b, cands := range m.byFirst {
		if len(cands) > 0 {
			m.first[b] = uint8(len(m.denied))
			m.denied = append(m.denied, deniedByAll(cands))
		}
	}
	return m
})

// deniedByAll returns the bytes in every candidate's deny set.
func deniedByAll(cands []*compiled) (set [256]bool) {
	for b := range set {
		set[b] = true
		for _, c := range cands {
			if c.deny == nil || !c.deny[b] {
				set[b] = false
			}
		}
	}
	return set
}

// pemEnd extends a private-key match over the rest of its body and the END
// line, so the reported length is the block's. It takes whole body lines
// only (base64, maybe indented as in YAML), so the text after a cut-off
// block is left for the other patterns.
func pemEnd(data []byte, end int) int {
	for {
		for end < len(data) && pemBase64[data[end]] {
			end++
		}
		brk := lineBreak(data, end)
		if brk == 0 {
			return end
		}
		next := end + brk
		for next < len(data) && (data[next] == ' ' || data[next] == '\t') {
			next++
		}
		if rest := data[next:]; bytes.HasPrefix(rest, pemEndLine) {
			if i := bytes.Index(rest[len(pemEndLine):min(len(rest), 80)], []byte("-----")); i >= 0 {
				return next + len(pemEndLine) + i + len("-----")
			}
			return end
		}
		j := next
		for j < len(data) && pemBase64[data[j]] {
			j++
		}
		if j == next || (j < len(data) && lineBreak(data, j) == 0) {
			return end // not a body line: the block was cut off
		}
		end = next
	}
}

var (
	pemEndLine = []byte("-----END ")
	pemBase64  = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
)

// lineBreak returns the length of the line break at data[i]: CRLF, LF, or
// their JSON escapes; 0 when there is none.
func lineBreak(data []byte, i int) int {
	for _, b := range lineBreaks {
		if bytes.HasPrefix(data[i:], b) {
			return len(b)
		}
	}
	return 0
}

var lineBreaks = [][]byte{[]byte("\r\n"), []byte("\n"), []byte(`\r\n`), []byte(`\n`)}
