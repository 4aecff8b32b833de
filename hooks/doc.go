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
//   - google: AIza and 35 more bytes
//   - slack-bot: xoxb-…
//   - slack-app: xapp-…
//   - discord: bot tokens, base64 user id . timestamp . HMAC
//   - telegram: bot tokens, id:A…, also inside api.telegram.org/bot… URLs
//   - brave: BSA…
//
// Each is looked for in the plain text and, after decoding, inside every
// percent-encoded run (sk%2Dant%2D…), every base64 run of at least
// [MinBase64] bytes in either alphabet, padded or not, and every hex run
// of at least [MinHex] digits. Base64 and hex wrapped over lines (as
// `base64` and `xxd -p` print them) are joined first.
//
// A [Finding] names the pattern, the [Encoding], the offset and line, and
// shows the secret only as its first four bytes and its length
// ("sk-a…(108 chars)"): findings are safe to log and to show the model.
//
// # False positives
//
// A false positive stops an agent, so matches are checked beyond their
// shape: a token must start at a word boundary (not inside a longer
// string or a base64 blob), must look random (two of lower case, upper
// case and digits, ten different bytes: placeholders such as
// "ghp_xxxx…" or "sk-your-key-here" fail), and patterns with weak prefixes
// carry extra checks (a Discord token's first part must decode to a
// numeric id). Git hashes, sha256 sums, UUIDs, JWTs and random base64 or
// hex pass clean; tests hold megabytes of each.
//
// # Cost
//
// Scan is linear in its input and safe for concurrent use. Candidate
// positions are picked by a table of first bytes, and precompiled regular
// expressions only see a short window there; decoders run only on runs
// long enough to hold a secret. One core scans mixed log text at about
// 180 MB/s, long base64 or hex blobs at about 140 MB/s and prose at about
// 700 MB/s (see the benchmarks).
//
// # Limitations
//
// This is a last line of defence against accidents and naive exfiltration,
// not a boundary: an agent that means to leak can encode a secret in ways
// no scanner follows (split, reversed, encrypted, base64 of base64). Only
// one layer of encoding is undone. Hex written with separators (de:ad or
// \xde) is not decoded. Base64 glued to preceding letters ("tokenc2st…")
// decodes misaligned and is missed. A key from an unlisted provider is not
// found. Random base64 lines that happen to begin like a Brave key are
// reported about once in a million lines; a real Brave key without a digit
// (about one in a hundred) is not.
package hooks
