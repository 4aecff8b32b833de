#!/usr/bin/env bash
# Installs the Debian packages `make test` (or, with "bench", `make bench`)
# needs, when run as root; otherwise names the missing ones with the exact
# command that installs them. This is the only list: .ci/run goes through
# `make test`, which runs it.
#
#   test:  gcc, libc6-dev: cgo, and the integration suite's attack probe;
#          pkg-config, libseccomp-dev: the libseccomp-tagged tests that check
#          the generated seccomp filters; git: the git workflow tests and diff
#          checks; perl: the TIOCSTI probe; util-linux: runuser for the
#          unprivileged pass; iproute2: network checks; bubblewrap: the
#          side-by-side benchmark tests; nodejs, npm: the `corral mcp` test
#          with the official TypeScript MCP SDK as the client (the test
#          installs the SDK with npm into the user's cache); curl, python3:
#          the clients the network tests run through the allowlist proxy;
#          chromium: the `corral browser` tests (which install
#          puppeteer-core with npm into a temporary directory).
#   bench: hyperfine on top of the above.
set -euo pipefail
pkgs=(gcc libc6-dev pkg-config libseccomp-dev git perl util-linux iproute2 bubblewrap curl python3)
# node and npm are looked for as commands: a node installed another way
# (NodeSource's nodejs bundles npm) must not be replaced by Debian's.
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
# Likewise a Chrome or Chromium installed another way, under a name
# `corral browser` looks for.
command -v chromium >/dev/null || command -v chromium-browser >/dev/null ||
  command -v google-chrome-stable >/dev/null || command -v google-chrome >/dev/null || pkgs+=(chromium)
for want in "$@"; do
  case $want in
  test) ;;
  bench) pkgs+=(hyperfine) ;;
  *) echo "deps.sh: unknown set $want (want test or bench)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "deps.sh: missing ${missing[*]}; install them with your package manager" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "deps.sh: missing ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A failed index refresh is not fatal by itself: the install says whether
# the packages could be had.
apt-get update -qq || echo "deps.sh: apt-get update failed; installing from the cached index" >&2
apt-get install -y -qq "${missing[@]}" >/dev/null
