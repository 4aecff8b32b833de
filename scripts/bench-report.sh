#!/usr/bin/env bash
# The cost of the violation report: a build step that creates 10,000 files
# in a sandbox, with the report (every write-intent call stops in the init's
# listener) against the same with --no-report. Two shapes: a shell loop
# (one openat per file and nothing else, the worst case) and tar extracting
# an archive (openat, fchmod, utimensat per file). Run by `make bench` after
# `make build`; as root it measures as the unprivileged user corral-test.
#
# Environment: HYPERFINE_RUNS runs per command (default 10).
set -euo pipefail

corral=${1:-bin/corral}
runs=${HYPERFINE_RUNS:-10}
command -v hyperfine >/dev/null || { echo "bench-report: hyperfine not found on PATH" >&2; exit 1; }
[ -x "$corral" ] || { echo "bench-report: $corral not built (run make build)" >&2; exit 1; }

dir=$(mktemp -d /tmp/corral-bench-report.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$corral" "$dir/corral"
# corral-init beside corral: the small binary its sandboxes run their init
# from (make build builds both).
init_helper=$(dirname "$corral")/corral-init
if [ -x "$init_helper" ]; then cp "$init_helper" "$dir/corral-init"; fi
ws=$dir/ws
mkdir "$ws" "$dir/home" "$dir/src"
for i in $(seq 10000); do echo x >"$dir/src/f$i"; done
tar cf "$ws/src.tar" -C "$dir/src" .
if [ "$(id -u)" = 0 ]; then
  user=corral-test
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
  chown -R "$user:$user" "$dir"
  as_user() { runuser -u "$user" -- env HOME="$dir/home" "$@"; }
else
  as_user() { env HOME="$dir/home" "$@"; }
fi
cd "$ws"
loop='rm -rf d && mkdir d && cd d && for i in $(seq 10000); do echo x > f$i; done'
untar="rm -rf d && mkdir d && tar xf src.tar -C d"
as_user hyperfine -N --warmup 2 --runs "$runs" --export-json "$dir/report.json" ${BENCH_SHOW:+--show-output} \
  -n loop-off "$dir/corral run --no-report -- sh -c '$loop'" \
  -n loop-on "$dir/corral run --report $dir/r.jsonl -- sh -c '$loop'" \
  -n untar-off "$dir/corral run --no-report -- sh -c '$untar'" \
  -n untar-on "$dir/corral run --report $dir/r.jsonl -- sh -c '$untar'" >/dev/null
# Medians: the machine may be shared, and the mean follows its outliers.
awk '
  /"command":/ { gsub(/[",]/, "", $2); name = $2 }
  /"median":/ { gsub(/,/, "", $2); m[name] = $2 * 1000 }
  END {
    printf "bench-report: 10k files by a shell loop: off %.0f ms, on %.0f ms (%.2fx; target <= 1.15x)\n",
      m["loop-off"], m["loop-on"], m["loop-on"] / m["loop-off"]
    printf "bench-report: 10k files by tar: off %.0f ms, on %.0f ms (%.2fx; target <= 1.15x)\n",
      m["untar-off"], m["untar-on"], m["untar-on"] / m["untar-off"]
  }' "$dir/report.json"
