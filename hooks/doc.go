// Package hooks stops secrets from leaving an agent through its tools.
//
// The agent loop asks a [Hook] before every tool call and after every tool
// result. [LeakGuard], the Hook this package provides, scans the call's
// arguments and the tool's output for API keys, tokens and private keys:
// a secret in the arguments skips the call, a secret in the output ends
// the agent run before the model sees it (it could otherwise send it out
// with its next call).
//
//	d := guard.BeforeToolCall(call.Name, call.Args)
//	if d.Action == hooks.Skip {
//		reply(call, d.Reason) // the tool does not run
//	}
//	out := run(call)
//	if d := guard.AfterToolResult(call.Name, out); d.Action == hooks.Terminate {
//		return fmt.Errorf("agent stopped: %s", d.Reason)
//	}
//
// [Scan] is the scanner itself; `corral scan` runs it on a file or stdin.
// [Redact] replaces the lines that hold a secret, for a tool server that
// must hand a result on without the secret rather than end the run.
//
// # What is found
//
// The pattern names, as [Finding].Pattern reports them:
//
//   - private-key: a "-----BEGIN … PRIVATE KEY-----" line followed by a
//     key body (RSA, EC, DSA, OPENSSH, PKCS#8, encrypted, PGP blocks)
//   - anthropic: sk-ant-…
//   - openrouter: sk-or-…
//   - openai: sk-proj-…, sk-svcacct-…, sk-admin-…, sk-None-…, any sk- key
//     carrying T3BlbkFJ, and legacy sk- keys of 48 letters and digits
//   - github: ghp_, gho_, ghu_, ghs_, ghr_ and github_pat_ tokens
//   - gitlab: glpat-, gldt-, glrt-, glptt-, glsoat-, glcbt- and gloas-
//     tokens
//   - google: AIza and 35 more bytes
//   - aws: access key ids, AKIA or ASIA and 16 base32 bytes (not the
//     documentation's AKIAIOSFODNN7EXAMPLE), and secret access keys, 40
//     base64 bytes, after their name: aws_secret_access_key = …,
//     AWS_SECRET_ACCESS_KEY=…, "SecretAccessKey": "…", secretAccessKey: '…'
//   - azure: the AccountKey= (88 bytes) and SharedAccessKey= (44 bytes)
//     of connection strings
//   - slack-bot: xoxb-…
//   - slack-app: xapp-…
//   - slack: user (xoxp-), workspace (xoxa-), refresh (xoxr-),
//     configuration (xoxe-, xoxe.xoxp-) and legacy (xoxs-) tokens
//   - stripe: live secret (sk_live_) and restricted (rk_live_) keys; test
//     keys move no money and publishable keys are public, neither is found
//   - npm: npm_ and 36 letters and digits
//   - huggingface: hf_ and 34 letters and digits
//   - sendgrid: SG., 22 bytes, a dot, 43 bytes
//   - jwt: JSON Web Tokens, eyJ… . eyJ… . signature, whose header names an
//     algorithm other than none
//   - discord: bot tokens, base64 user id . timestamp . HMAC
//   - telegram: bot tokens, id:A…, also inside api.telegram.org/bot… URLs
//   - brave: BSA…
//   - known: with [ScanKnown], the value of a [Known] secret the caller
//     holds, whatever its shape; its placeholder is never found
//
// Each is looked for in the plain text and in these layers, each undone
// once ([Encoding] names them):
//
//   - url: inside every percent-encoded run (sk%2Dant%2D…)
//   - base64, base64url: every base64 run of at least [MinBase64] bytes in
//     either alphabet, padded or not
//   - hex: every hex run of at least [MinHex] digits
//   - base32: every base64 run of at least [MinBase32] bytes that holds
//     only base32 bytes (A-Z, 2-7), as `base32` prints it
//   - gzip: a gzip or zlib stream that a base64, base32 or hex run or a
//     hex dump decodes to (`gzip | base64`); each stream is inflated to
//     at most 4 MiB, and all of a scan's together to 8 times the input's
//     size plus 4 MiB
//   - escape: every run holding \uXXXX, \UXXXXXXXX or \xXX escapes (JSON
//     with ensure_ascii, JavaScript, Python's bytes)
//   - hex dump: lines that start, after an offset column, with hex bytes
//     in groups of 2, 4 or 8 digits separated by blanks, colons or commas
//     (xxd, hexdump -C, od -A x -t x1, aa:bb:cc, {0x.., 0x..}), joined
//     over consecutive lines
//   - folded: a secret cut over lines of one width, as `fold -w 20` or a
//     terminal's hard wrap leaves it: lines of the same width (8 or more)
//     and a last one no longer, each break between two non-blank bytes;
//     the words of 20 bytes or more that a break cuts are joined and
//     scanned, and decoded (base64, base32, hex) when the block has three
//     lines or more
//
// Base64 and hex wrapped over lines (as `base64` and `xxd -p` print them)
// are joined first; at widths the joining does not take (below 24, or
// not a multiple of 4) the folded layer joins them down to 8 when they
// fill three lines or more.
//
// A [Finding] names the pattern, the [Encoding], the offset and line, and
// shows the secret only as its first four bytes and its length
// ("sk-a…(108 chars)"): findings are safe to log and to show the model.
//
// # False positives
//
// A false positive stops an agent, so matches are checked beyond their
// shape: a token must look random (two of lower case, upper case and
// digits, ten different bytes: placeholders such as "ghp_xxxx…" or
// "sk-your-key-here" fail), and patterns with weak prefixes carry extra
// checks (a Discord token's first part must decode to a numeric id, a
// JWT's header to JSON naming an algorithm, a Hugging Face token must mix
// cases as random letters do, not as CamelCase). A token must start at a
// word boundary, or, glued to what precedes it ("xghp_…", "_sk-ant-…",
// "/v1/AKIA…"), follow a word of at most 16 letters, digits, '_' or '-'
// and end its run of token bytes (what follows is no letter, digit, '_',
// '-', '+' or '/', bar the '/' that closes a path segment): a prefix that
// occurs by chance inside a random base64 line does neither. Legacy
// OpenAI, Discord, Telegram and Brave tokens, whose starts are common in
// words, are found only at a word boundary. Git hashes, sha256 sums,
// UUIDs, go.sum lines, random base64, base32, hex and gzip+base64, hex
// dumps and escapes of text pass clean; tests hold megabytes of each.
//
// # Cost
//
// Scan is linear in its input and safe for concurrent use. Candidate
// positions are picked by a table of first bytes, and precompiled regular
// expressions only see a short window there (at most 8 KiB, for a JWT);
// decoders run only on runs long enough to hold a secret, and what they
// decode is never larger than the run, but for inflation, which the
// budget above bounds. Each layer reads each input byte a bounded number
// of times: a line is in at most one folded block or hex dump. See the
// benchmarks for the rates.
//
// # Limitations
//
// This is a last line of defence against accidents and naive exfiltration,
// not a boundary: an agent that means to leak can encode a secret in ways
// no scanner follows. Not caught: a secret reversed, in rot13 or any
// other substitution, encrypted, or cut into pieces printed apart (not as
// lines of one width); two layers of encoding (base64 of base64, hex of
// base64), except gzip or zlib inside one layer; a stream past the
// inflation cap; base64 glued to preceding letters ("tokenc2st…"), which
// decodes misaligned; hex dumps of 16-bit words in the machine's byte
// order (od -x, hexdump without -C) and dumps whose repeated lines are
// squeezed to "*" (the bytes are not there); a fold narrower than 8
// columns, or one whose lines are not all of one width (fold -s), or an
// encoded secret folded into exactly two lines; an AWS
// secret access key or Azure key printed without its name; a key from an
// unlisted provider. Random base64 lines that happen to begin like a
// Brave key are reported about once in a million lines; a real Brave key
// without a digit (about one in a hundred) is not.
package hooks
