package hooks_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/hooks"
	"github.com/corralhq/corral/internal/childcover"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/mcpserver"
)

// TestMain lets the test binary serve as the sandbox's init, which
// corral runs by re-executing the program.
func TestMain(m *testing.M) {
	if childcover.Init(corral.Init) {
		return
	}
	os.Exit(m.Run())
}

// TestSandboxedCommandOutputIsScanned: a command run in the sandbox
// through corral's MCP server prints secrets of the formats the scanner
// used to miss, plain, glued to a word, folded, in base32, gzip+base64,
// hex dumps and \u escapes; the client sees their lines redacted and the
// result marked as an error. Before these formats and layers the same
// output reached the client whole. Each case first proves the leak:
// undone on the host without the scanner, the command's output holds
// every secret.
func TestSandboxedCommandOutputIsScanned(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	cfg := corral.Config{
		Workspace:     ws,
		ReadOnlyPaths: []string{base},
		Env:           []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
	}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	srv, err := mcpserver.New(sb, mcpserver.Options{})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cancel()
		srv.Close()
	})

	// Secrets are built at run time and written to a file the command
	// reads, so neither the source nor the tool call's arguments hold one.
	r := strings.NewReplacer("#", "")
	secrets := map[string]string{
		"aws":         r.Replace("AKIA#Q3EGRT5XN7BW2PLM"),
		"aws-secret":  r.Replace("aws_secret_access_key = Zq8vN2#xLr5Tk9PwB3mHs7YcD4fJg6Ku1eAo0RiWp"),
		"slack":       r.Replace("xoxp-#384910275563-502948173620-7730185296441-") + "9f3a6c1e0b8d47f2a5c9e3d1b7f06a48",
		"stripe":      r.Replace("sk_live_#51Hc") + "Qz7Rk2WxTb4Lm9Vp3Nc8Yh1Fs6Dg0Ja5",
		"gitlab":      r.Replace("glpat-#") + "Zx9Qw3Lk7Vb2Mn4Rt6Yu",
		"npm":         r.Replace("npm_#") + "aB3dE5gH7jKq2Lw8Zx4Cv6Bn0Mr1Ts9Yu5Pe",
		"huggingface": r.Replace("hf_#") + "QwErTyUiOpAsDfGhJkLzXcVbNmQaZwSxEd",
		"sendgrid":    r.Replace("SG.#") + "Ab3De5Gh7Jk9Mn1Pq3St5V" + "." + "Wx7Yz9Ab1Cd3Ef5Gh2Ij4Kl6Mn8Op0Qr3St5Uv7Wx9y",
		"jwt": base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
			base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"1234567890","name":"agent"}`)) + "." + "Sg4Kf7Lm2Np9QrTw3Hx8Jz1Bc5Dv0Fe6Gy4Ri7Ua2Ol",
		"glued": "value_" + r.Replace("ghp_#") + "Ab3De5Gh7JkL9mN2pQ4rS6tU8vW0xY1zC3dE",
	}
	var env strings.Builder
	for name, s := range secrets {
		env.WriteString(strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "=" + s + "\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "env"), []byte(env.String()), 0o644))

	cases := []struct {
		name, command string
		// reveal undoes the command's encoding on the host, without the
		// scanner: the probe that the secrets really are in its output.
		reveal func(t *testing.T, out []byte) string
	}{
		{"plain", "cat env", func(_ *testing.T, out []byte) string { return string(out) }},
		{"fold -w 20", "fold -w 20 env", func(_ *testing.T, out []byte) string { return strings.ReplaceAll(string(out), "\n", "") }},
		{"base32", "base32 env", func(t *testing.T, out []byte) string {
			b, err := base32.StdEncoding.DecodeString(strings.ReplaceAll(string(out), "\n", ""))
			require.NoError(t, err)
			return string(b)
		}},
		{"gzip | base64", "gzip -c env | base64", func(t *testing.T, out []byte) string {
			b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(string(out), "\n", ""))
			require.NoError(t, err)
			zr, err := gzip.NewReader(bytes.NewReader(b))
			require.NoError(t, err)
			plain, err := io.ReadAll(zr)
			require.NoError(t, err)
			return string(plain)
		}},
		{"xxd", "xxd env", func(t *testing.T, out []byte) string { return reverseDump(t, out, ":", "  ") }},
		{"hexdump -C", "hexdump -C env", func(t *testing.T, out []byte) string { return reverseDump(t, out, " ", "|") }},
		{"od", "od -A x -t x1 env", func(t *testing.T, out []byte) string { return reverseDump(t, out, " ", "") }},
		{"\\u escapes", `python3 -c 'print("".join("\\u%04x" % ord(c) for c in open("env").read()))'`, func(t *testing.T, out []byte) string {
			var v string
			require.NoError(t, json.Unmarshal([]byte(`"`+strings.TrimSpace(string(out))+`"`), &v))
			return v
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.command, "python3") {
				if _, err := os.Stat("/usr/bin/python3"); err != nil {
					t.Skip("no /usr/bin/python3 for the sandbox to run")
				}
			}
			raw, err := sb.Command(ctx, "/bin/sh", "-c", tc.command).Output()
			require.NoError(t, err, "%s", raw)
			plain := tc.reveal(t, raw)
			for name, s := range secrets {
				require.Contains(t, plain, s, "the output of %q carries the %s secret", tc.command, name)
			}
			found := hooks.Scan(raw)
			kinds := map[string]bool{}
			for _, f := range found {
				kinds[f.Pattern] = true
			}
			for _, want := range []string{hooks.PatternAWS, hooks.PatternSlack, hooks.PatternStripe, hooks.PatternGitLab, hooks.PatternNPM, hooks.PatternHugging, hooks.PatternSendGrid, hooks.PatternJWT, hooks.PatternGitHub} {
				assert.True(t, kinds[want], "%s not found in the output of %q: %v", want, tc.command, found)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": tc.command}})
			require.NoError(t, err)
			var got strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					got.WriteString(tc.Text)
				}
			}
			assert.True(t, res.IsError, "a result that held a secret is an error")
			assert.Contains(t, got.String(), "redacted")
			assert.Empty(t, hooks.Scan([]byte(got.String())), "what reaches the client holds no secret")
			for name, s := range secrets {
				assert.NotContains(t, got.String(), s[len(s)-16:], "%s reached the client", name)
			}
		})
	}
}

// reverseDump reads the bytes back from a hex dump: on each line, the
// fields after the offset (which ends with offsetEnd) up to text (the
// start of the text column; "" when there is none).
func reverseDump(t *testing.T, out []byte, offsetEnd, text string) string {
	var b []byte
	for _, line := range strings.Split(string(out), "\n") {
		_, rest, ok := strings.Cut(line, offsetEnd)
		if !ok {
			continue
		}
		if text != "" {
			if i := strings.Index(strings.TrimLeft(rest, " "), text); i >= 0 {
				rest = strings.TrimLeft(rest, " ")[:i]
			}
		}
		for _, field := range strings.Fields(rest) {
			v, err := hex.DecodeString(field)
			require.NoError(t, err, "%q", line)
			b = append(b, v...)
		}
	}
	return string(b)
}
