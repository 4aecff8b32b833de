#!/usr/bin/env bash
# The egress proxy against direct connections to the same loopback server,
# checked against the targets of issue 14. Run by `make bench`; the
# benchmarks are egress/bench_test.go, where client, proxy and server share
# one process (so CPU per byte counts all three).
#
# Environment: EGRESS_SETUP_RUNS connections per setup measurement
# (default 2000), EGRESS_COUNT runs of each transfer benchmark, median
# taken (default 3), BENCH_STRICT=1 makes a missed target fail the script.
set -euo pipefail

setup_runs=${EGRESS_SETUP_RUNS:-2000}
count=${EGRESS_COUNT:-3}
GO=${GO:-go}

dir=$(mktemp -d /tmp/corral-bench-egress.XXXXXX)
trap 'rm -rf "$dir"' EXIT
$GO test -c -o "$dir/egress.test" ./egress

run() { (cd "$dir" && ./egress.test -test.run '^$' -test.bench "$@") >>"$dir/out.txt"; }
# Rounds rather than -test.count, so that a drift in the machine's load
# spreads over both sides of each comparison.
for _ in $(seq "$count"); do
  run 'Setup' -test.benchtime "${setup_runs}x"
  run 'SecretRequest' -test.benchtime 500x
  run 'Throughput|Concurrent64|Forward' -test.benchtime 1x -test.timeout 30m
done

# metric NAME UNIT prints the median of a benchmark's metric over its runs.
metric() {
  awk -v n="Benchmark$1-" -v u="$2" 'index($1, n) == 1 { for (i = 3; i < NF; i++) if ($(i + 1) == u) print $i }' "$dir/out.txt" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.4g", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }

echo "egress proxy (go test -bench, median of $count rounds), load $(cut -d" " -f1 /proc/loadavg)"
printf '  %-34s %10s %10s %10s\n' "" direct connect socks5
printf '  %-34s %10s %10s %10s\n' "setup + 1-byte echo, p50 µs" \
  "$(metric Setup/direct p50-µs)" "$(metric Setup/connect p50-µs)" "$(metric Setup/socks5 p50-µs)"
printf '  %-34s %10s %10s\n' "1 GiB, one connection, MB/s" "$(metric Throughput/direct MB/s)" "$(metric Throughput/connect MB/s)"
printf '  %-34s %10s %10s\n' "  CPU ns per byte (whole process)" "$(metric Throughput/direct cpu-ns/B)" "$(metric Throughput/connect cpu-ns/B)"
printf '  %-34s %10s %10s\n' "1 GiB, published port, MB/s" "$(metric Forward/direct MB/s)" "$(metric Forward/forward MB/s)"
printf '  %-34s %10s %10s\n' "1 GiB, 64 connections, MB/s" "$(metric Concurrent64/direct MB/s)" "$(metric Concurrent64/connect MB/s)"
printf '  %-34s %10s %10s\n' "  CPU ns per byte (whole process)" "$(metric Concurrent64/direct cpu-ns/B)" "$(metric Concurrent64/connect cpu-ns/B)"
printf '  %-34s %10s %10s\n' "" tunnel terminated
printf '  %-34s %10s %10s\n' "HTTPS request, new conn, p50 µs" "$(metric SecretRequest/tunnel/new p50-µs)" "$(metric SecretRequest/terminated/new p50-µs)"
printf '  %-34s %10s %10s\n' "HTTPS request, reused, p50 µs" "$(metric SecretRequest/tunnel/reused p50-µs)" "$(metric SecretRequest/terminated/reused p50-µs)"
echo

extra=$(calc "$(metric Setup/connect p50-µs) - $(metric Setup/direct p50-µs)")
tput=$(calc "$(metric Throughput/connect MB/s) / $(metric Throughput/direct MB/s)")
fwd=$(calc "$(metric Forward/forward MB/s) / $(metric Forward/direct MB/s)")
cpu=$(calc "$(metric Concurrent64/connect cpu-ns/B) / $(metric Concurrent64/direct cpu-ns/B)")
mitm=$(calc "$(metric SecretRequest/terminated/new p50-µs) - $(metric SecretRequest/tunnel/new p50-µs)")
mitmReused=$(calc "$(metric SecretRequest/terminated/reused p50-µs) - $(metric SecretRequest/tunnel/reused p50-µs)")
missed=0
target() {
  if awk "BEGIN { exit !($2 $3 $4) }"; then
    printf '  PASS  %-44s %s\n' "$1" "$5"
  else
    printf '  MISS  %-44s %s\n' "$1" "$5"
    missed=$((missed + 1))
  fi
}
echo "targets"
target "CONNECT setup p50 <= direct + 300 µs" "$extra" "<=" 300 "+$extra µs"
target "1 GiB throughput >= 0.8x direct" "$tput" ">=" 0.8 "${tput}x"
target "64 connections CPU per byte <= 1.5x direct" "$cpu" "<=" 1.5 "${cpu}x"
target "published port throughput >= 0.7x direct" "$fwd" ">=" 0.7 "${fwd}x"
target "secret, new connection: p50 <= tunnel + 1 ms" "$mitm" "<=" 1000 "+$mitm µs"
target "secret, reused connection: p50 <= tunnel + 1 ms" "$mitmReused" "<=" 1000 "+$mitmReused µs"
echo
echo "$missed missed"
if [ "${BENCH_STRICT:-0}" = 1 ] && [ "$missed" != 0 ]; then
  exit 1
fi
