//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npmUnreachable matches what npm says when it cannot reach its registry.
var npmUnreachable = regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network`)

// npmInstall installs pkgs into a temporary directory and returns it; it
// skips t when npm is missing or its registry unreachable.
func npmInstall(t *testing.T, pkgs ...string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed (scripts/deps.sh installs it)")
	}
	dir := t.TempDir()
	c := exec.Command(npm, append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir}, pkgs...)...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil && npmUnreachable.Match(out) {
		t.Skipf("the npm registry is unreachable: %s", out)
	}
	require.NoError(t, err, "npm install: %s", out)
	return dir
}

// clientScript connects Puppeteer (to the WebSocket of /json/version: its
// browserURL keeps only the host of the endpoint, not the token) and
// Playwright (connectOverCDP, to the endpoint as printed), loads the page
// in each and takes a screenshot.
const clientScript = `
const puppeteer = require('puppeteer-core');
const { chromium } = require('playwright-core');
const [endpoint, url] = process.argv.slice(2);
(async () => {
  const out = {};
  const version = await (await fetch(endpoint + '/json/version')).json();
  const b = await puppeteer.connect({ browserWSEndpoint: version.webSocketDebuggerUrl });
  const page = await b.newPage();
  await page.goto(url);
  out.puppeteerTitle = await page.title();
  out.puppeteerPNG = Buffer.from(await page.screenshot()).subarray(1, 4).toString();
  await page.close();
  await b.disconnect();
  const pw = await chromium.connectOverCDP(endpoint);
  const ctx = pw.contexts()[0] || await pw.newContext();
  const p2 = await ctx.newPage();
  await p2.goto(url);
  out.playwrightTitle = await p2.title();
  out.playwrightPNG = (await p2.screenshot()).subarray(1, 4).toString();
  await p2.close();
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch(e => { console.error(e); process.exit(1); });
`

// Puppeteer and Playwright, from npm, drive the sandboxed browser through
// the endpoint and take screenshots of an allowed page.
func TestBrowserPuppeteerAndPlaywright(t *testing.T) {
	needsChromium(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/deps.sh installs it)")
	}
	port, cfg := browserScene(t)
	b := launchBrowser(t, cfg)
	dir := npmInstall(t, "puppeteer-core", "playwright-core")
	script := filepath.Join(dir, "client.js")
	require.NoError(t, os.WriteFile(script, []byte(clientScript), 0o644))

	c := exec.Command(node, script, b.Endpoint(), fmt.Sprintf("http://allowed.test:%d/", port))
	c.Dir = dir
	c.Stderr = os.Stderr
	out, err := c.Output()
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	want := fmt.Sprintf("page of allowed.test:%d", port)
	assert.Equal(t, map[string]string{"puppeteerTitle": want, "puppeteerPNG": "PNG", "playwrightTitle": want, "playwrightPNG": "PNG"}, got)
}
