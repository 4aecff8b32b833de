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
	PatternAWS        = "aws"
	PatternSlack      = "slack"
	PatternStripe     = "stripe"
	PatternJWT        = "jwt"
	PatternGitLab     = "gitlab"
	PatternNPM        = "npm"
	PatternHugging    = "huggingface"
	PatternSendGrid   = "sendgrid"
	PatternAzure      = "azure"
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
	// closed patterns have a fixed length: a byte of tail (tokenByte when
	// nil) right after the match means a longer string, not this secret.
	closed bool
	tail   *[256]bool
	// glue, when set, accepts a match right after a byte of deny after
	// all ("TOKEN=xghp_…", "/v1/sk-ant-…"): the prefix is rare enough,
	// and glue checks the body. The match must then end the run of
	// token bytes it sits in, which a slice of a random blob does not.
	glue func(body []byte) bool
	// glueRun is how many token bytes follow the prefix of every match
	// that may be glued (16 when 0).
	glueRun int
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
	{name: PatternAnthropic, prefix: "sk-ant-", re: `^sk-ant-[A-Za-z0-9_-]{20,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	{name: PatternOpenRouter, prefix: "sk-or-", re: `^sk-or-[A-Za-z0-9_-]{20,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	// Stripe's secret and restricted keys; test-mode keys move no money
	// and are left alone, publishable keys (pk_) are public.
	{name: PatternStripe, prefix: "sk_live_", re: `^sk_live_[A-Za-z0-9]{24,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	{name: PatternStripe, prefix: "rk_live_", re: `^rk_live_[A-Za-z0-9]{24,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	{name: PatternOpenAI, prefix: "sk-", re: `^sk-[A-Za-z0-9_-]{20,}`, window: 512, deny: &tokenDeny, valid: openAIShape, glue: openAIMarked},
	{name: PatternGitHub, prefix: "gh", re: `^gh[pousr]_[A-Za-z0-9]{36,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	{name: PatternGitHub, prefix: "github_pat_", re: `^github_pat_[A-Za-z0-9_]{40,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	// Personal, deploy, runner, project, service-account, CI job and
	// OAuth application tokens.
	{name: PatternGitLab, prefix: "gl", re: `^gl(?:pat|dt|rt|ptt|soat|cbt|oas)-[A-Za-z0-9_-]{20,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	{name: PatternGoogle, prefix: "AIza", re: `^AIza[A-Za-z0-9_-]{35}`, window: 64, deny: &tokenDeny, closed: true, valid: looksRandom, glue: looksRandom},
	// AWS access key ids: long-term (AKIA) and temporary (ASIA); the
	// other A???-prefixed ids name users and roles, they grant nothing.
	{name: PatternAWS, prefix: "AKIA", re: `^AKIA[A-Z2-7]{16}`, window: 32, deny: &tokenDeny, closed: true, valid: awsKeyID, glue: awsKeyID},
	{name: PatternAWS, prefix: "ASIA", re: `^ASIA[A-Z2-7]{16}`, window: 32, deny: &tokenDeny, closed: true, valid: awsKeyID, glue: awsKeyID},
	// The secret access key has no prefix of its own: it is found after
	// its name (aws_secret_access_key = …, "SecretAccessKey": "…").
	{name: PatternAWS, anchor: "ccess", back: awsSecretStart, re: `^[A-Za-z0-9/+]{40}`, window: 48, closed: true, tail: &base64Byte, valid: awsSecret},
	{name: PatternAWS, anchor: "CCESS", back: awsSecretStart, re: `^[A-Za-z0-9/+]{40}`, window: 48, closed: true, tail: &base64Byte, valid: awsSecret},
	// Azure storage account keys (64 bytes) and Service Bus / Event
	// Hubs shared access keys (32 bytes) in connection strings.
	{name: PatternAzure, anchor: "AccountKey=", back: after("AccountKey="), re: `^[A-Za-z0-9+/]{86}==`, window: 96, valid: looksRandom},
	{name: PatternAzure, anchor: "SharedAccessKey=", back: after("SharedAccessKey="), re: `^[A-Za-z0-9+/]{43}=`, window: 48, valid: looksRandom},
	{name: PatternSlackBot, prefix: "xoxb-", re: `^xoxb-[0-9]{6,}-[A-Za-z0-9-]{16,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	{name: PatternSlackApp, prefix: "xapp-", re: `^xapp-[0-9]+-[A-Za-z0-9-]{20,}`, window: 512, deny: &tokenDeny, valid: looksRandom, glue: looksRandom},
	// User (xoxp), workspace (xoxa), refresh (xoxr), configuration
	// (xoxe, xoxe.xoxp) and legacy (xoxs) tokens.
	{name: PatternSlack, prefix: "xox", re: `^xox[aeprs](?:\.xox[ap])?-[A-Za-z0-9-]{20,}`, window: 512, deny: &tokenDeny, valid: randomWithDigit, glue: randomWithDigit, glueRun: 1},
	{name: PatternNPM, prefix: "npm_", re: `^npm_[A-Za-z0-9]{36}`, window: 48, deny: &tokenDeny, closed: true, valid: looksRandom, glue: looksRandom},
	{name: PatternHugging, prefix: "hf_", re: `^hf_[A-Za-z0-9]{34}`, window: 48, deny: &tokenDeny, closed: true, valid: mixedCase, glue: mixedCase},
	{name: PatternSendGrid, prefix: "SG.", re: `^SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`, window: 80, deny: &tokenDeny, closed: true, valid: looksRandom, glue: looksRandom},
	// JSON Web Tokens: header . payload . signature, header and payload
	// base64url JSON objects; unsigned ones (alg none) grant nothing.
	{name: PatternJWT, prefix: "eyJ", re: `^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}`, window: 8192, deny: &tokenDeny, valid: jwtHeader, glue: jwtHeader, glueRun: 8},
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
	// base64Byte: the standard alphabet without padding.
	base64Byte = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
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
	tail        *[256]bool
	glueRun     int
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
	// glued holds, per class, the second bytes of the candidates that
	// may be glued to what precedes them: a denied byte before is then
	// not the end of it.
	glued [][256]bool
	// minGlued is, per class, the fewest token bytes a glued match of
	// any of its candidates starts with: its prefix and glueRun more
	// (counting a prefix's punctuation, which may not be a token byte,
	// out).
	minGlued []int
}

// loadMatcher compiles the patterns on first use rather than in init: every
// program importing this package would otherwise pay for it at start-up,
// including the re-executed sandbox init.
var loadMatcher = sync.OnceValue(func() *matcher {
	m := &matcher{}
	for i := range patterns {
		p := &patterns[i]
		c := &compiled{pattern: p, glueRun: p.glueRun, re: regexp.MustCompile(p.re), prefixBytes: []byte(p.prefix), anchorBytes: []byte(p.anchor), tail: p.tail}
		if c.tail == nil {
			c.tail = &tokenByte
		}
		if c.glueRun == 0 {
			c.glueRun = 16
		}
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
	m.denied, m.glued, m.minGlued = [][256]bool{{}}, [][256]bool{{}}, []int{0}
	for b, cands := range m.byFirst {
		if len(cands) > 0 {
			m.first[b] = uint8(len(m.denied))
			m.denied = append(m.denied, deniedByAll(cands))
			var second [256]bool
			least := 0
			for _, c := range cands {
				if c.glue != nil {
					n := 0
					for n < len(c.prefix) && tokenByte[c.prefix[n]] {
						n++
					}
					if n == len(c.prefix) {
						n += c.glueRun
					}
					if least == 0 || n < least {
						least = n
					}
					if len(c.prefix) < 2 {
						panic("hooks: a pattern that may be glued needs a prefix of two bytes or more: " + c.name)
					}
					second[c.prefix[1]] = true
				}
			}
			m.glued = append(m.glued, second)
			m.minGlued = append(m.minGlued, least)
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
