#!/usr/bin/env bash
# The whole-command cost of --net allow, side by side with sandbox-runtime
# (srt) when it is installed: `curl` to an allowed server on loopback,
# through each one's proxy. Run by `make bench` after `make build`.
#
# srt is looked up as $SRT, else on PATH, else in $SRT_DIR/node_modules/.bin
# (install it with `npm install @anthropic-ai/sandbox-runtime` in a scratch
# directory and point SRT_DIR at it); it needs socat, bubblewrap and
# ripgrep. Without it the comparison is skipped with a line.
#
# Environment: HYPERFINE_RUNS runs per command (default 50; srt takes about
# half a second each), BENCH_STRICT=1 makes a missed target fail the script.
set -euo pipefail

corral=${1:-bin/corral}
runs=${HYPERFINE_RUNS:-50}

die() { echo "bench-srt: $*" >&2; exit 1; }
for tool in hyperfine curl python3 awk; do
  command -v "$tool" >/dev/null || die "$tool not found on PATH"
done
[ -x "$corral" ] || die "$corral not built (run make build)"

dir=$(mktemp -d /tmp/corral-bench-srt.XXXXXX)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
chmod 755 "$dir"
cp "$corral" "$dir/corral"
# corral-init beside corral: the small binary its sandboxes run their init
# from (make build builds both).
init_helper=$(dirname "$corral")/corral-init
if [ -x "$init_helper" ]; then cp "$init_helper" "$dir/corral-init"; fi
chmod 755 "$dir/corral"
ws=$dir/ws
mkdir "$ws" "$dir/www" "$dir/home"
echo hello >"$dir/www/f"

if [ "$(id -u)" = 0 ]; then
  user=corral-test
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
  chown "$user" "$ws" "$dir/home"
  as_user() { runuser -u "$user" -- env HOME="$dir/home" TMPDIR="$ws" PATH="$PATH" "$@"; }
else
  user=$(id -un)
  as_user() { env HOME="$dir/home" TMPDIR="$ws" "$@"; }
fi

# The allowed server: a static file on 127.0.0.1, on a port the kernel picks.
python3 - "$dir/www" "$dir/port" <<'EOF' &
import functools, http.server, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=sys.argv[1]))
open(sys.argv[2] + ".tmp", "w").write(str(srv.server_address[1]))
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
srv.serve_forever()
EOF
server=$!
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
[ -s "$dir/port" ] || die "the local server did not start"
port=$(cat "$dir/port")
url=http://127.0.0.1:$port/f
# Both sandboxes name their proxy in HTTP_PROXY and leave 127.0.0.1 out of
# it (NO_PROXY): the request names the proxy itself.
probe="curl -sS -o /dev/null -x \"\$HTTP_PROXY\" --noproxy '' $url"

srt=${SRT:-$(command -v srt || true)}
if [ -z "$srt" ] && [ -n "${SRT_DIR:-}" ] && [ -x "$SRT_DIR/node_modules/.bin/srt" ]; then
  srt=$SRT_DIR/node_modules/.bin/srt
fi
missing=
for tool in socat bwrap rg; do
  command -v "$tool" >/dev/null || missing="$missing $tool"
done

echo "egress: curl to an allowed server on loopback, whole command (hyperfine, $runs runs), median ms"
cmds=(-n corral "$dir/corral run --workspace $ws --net allow --allow-ip 127.0.0.1/32 -- sh -c \"$probe\"")
if [ -n "$srt" ] && [ -z "$missing" ]; then
  printf '{"network": {"allowedDomains": ["127.0.0.1:%s"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["%s"], "denyWrite": []}}\n' \
    "$port" "$ws" >"$dir/srt.json"
  chmod 644 "$dir/srt.json"
  cmds+=(-n srt "$srt -s $dir/srt.json -c \"$probe\"")
fi
(cd "$ws" && as_user hyperfine -N --style none --warmup 3 --runs "$runs" --export-csv "$ws/egress.csv" "${cmds[@]}") \
  >/dev/null 2>"$dir/hyperfine.err" || { cat "$dir/hyperfine.err" >&2; die "hyperfine failed"; }
median_ms() { awk -F, -v n="$1" '$1 == n { printf "%.2f", $4 * 1000 }' "$ws/egress.csv"; }
corral_ms=$(median_ms corral)
printf '  %-28s %9s\n' "corral run --net allow" "$corral_ms"
if [ -z "$srt" ]; then
  echo "  sandbox-runtime: skipped (not installed: npm install @anthropic-ai/sandbox-runtime, then SRT_DIR=that directory)"
  exit 0
fi
if [ -n "$missing" ]; then
  echo "  sandbox-runtime: skipped (it needs$missing)"
  exit 0
fi
srt_ms=$(median_ms srt)
ratio=$(awk "BEGIN { printf \"%.3f\", $corral_ms / $srt_ms }")
printf '  %-28s %9s\n' "sandbox-runtime (srt)" "$srt_ms"
if awk "BEGIN { exit !($ratio <= 0.25) }"; then
  printf '  PASS  %-38s %sx\n' "corral <= 0.25x sandbox-runtime" "$ratio"
else
  printf '  MISS  %-38s %sx\n' "corral <= 0.25x sandbox-runtime" "$ratio"
  [ "${BENCH_STRICT:-0}" = 1 ] && exit 1
fi
exit 0
