#!/usr/bin/env bash
# Spawn benchmarks, side by side with bubblewrap, checked against the targets
# of issues 6 and 18. Run by `make bench` after `make build`; see docs/benchmarks.md
# for the output format.
#
# As root it measures as the unprivileged user corral-test (created when
# missing), as agents run, and measures the cost of extra host mounts in a
# private mount namespace; as a normal user it skips the latter.
#
# Environment: BENCH_RUNS spawns per `corral bench` measurement (default
# 400), HYPERFINE_RUNS runs per whole command (default 200), SLOPE_ROUNDS
# pairs of runs for the mount slope (default 6), BENCH_STRICT=1 makes a
# missed target fail the script.
set -euo pipefail

corral=${1:-bin/corral}
heavy=${2:-bin/heavy-caller}
runs=${BENCH_RUNS:-400}
hf_runs=${HYPERFINE_RUNS:-200}
extra_mounts=200
slope_rounds=${SLOPE_ROUNDS:-6}

die() { echo "bench: $*" >&2; exit 1; }
for tool in hyperfine bwrap awk; do
  command -v "$tool" >/dev/null || die "$tool not found on PATH (.ci/run installs hyperfine and bubblewrap)"
done
[ -x "$corral" ] || die "$corral not built (run make build)"
[ -x "$heavy" ] || die "$heavy not built (make bench builds it from internal/bench/heavycaller)"
bwrap=$(command -v bwrap)

dir=$(mktemp -d /tmp/corral-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$corral" "$dir/corral"
# corral-init beside corral: the small binary its sandboxes run their init
# from (make build builds both).
init_helper=$(dirname "$corral")/corral-init
if [ -x "$init_helper" ]; then cp "$init_helper" "$dir/corral-init"; fi
# corral-mcp beside corral: the MCP server `corral bench --vs-mcp` starts.
mcp_server=$(dirname "$corral")/corral-mcp
[ -x "$mcp_server" ] || die "$mcp_server not built (run make build)"
cp "$mcp_server" "$dir/corral-mcp"
chmod 755 "$dir/corral" "$dir/corral-mcp"
cp "$heavy" "$dir/heavy-caller"
chmod 755 "$dir/heavy-caller"
ws=$dir/ws
mkdir "$ws"
# The binary the sandboxes' inits run from: corral-init when built.
init_bin=$dir/corral
if [ -x "$dir/corral-init" ]; then chmod 755 "$dir/corral-init"; init_bin=$dir/corral-init; fi

# as_user runs a command as the measuring user, with TMPDIR in the
# workspace it owns and HOME beside it (corral refuses a workspace that is
# the home).
if [ "$(id -u)" = 0 ]; then
  user=corral-test
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
  mkdir "$dir/home"
  chown "$user" "$ws" "$dir/home"
  as_user() { runuser -u "$user" -- env HOME="$dir/home" TMPDIR="$ws" "$@"; }
else
  user=$(id -un)
  as_user() { env TMPDIR="$ws" "$@"; }
fi

# json_field FILE KEY prints one numeric field of corral bench --json output
# (one field per line).
json_field() {
  sed -n "s/^ *\"$2\": *\([-0-9.e+]*\),\{0,1\}\$/\1/p" "$1"
}

# calc EXPR evaluates a floating-point expression to two decimals; exact
# EXPR does so to four, for the target checks.
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
exact() { awk "BEGIN { printf \"%.4f\", $1 }"; }

# median N... prints the median of integers.
median() {
  printf '%s\n' "$@" | sort -n |
    awk '{ v[NR] = $1 } END { printf "%.0f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench NAME ARGS... runs corral bench --json as the user into $dir/NAME.json.
bench() {
  local name=$1
  shift
  (cd "$ws" && as_user "$dir/corral" bench --runs "$runs" --json "$@") >"$dir/$name.json" ||
    die "corral bench $* failed"
}

# heavy_bench NAME ARGS... runs the heavy caller (64 MiB and 30 ms of
# package init) as the user into $dir/NAME.json.
heavy_bench() {
  local name=$1
  shift
  (cd "$ws" && as_user "$dir/heavy-caller" -vs-bwrap "$@") >"$dir/$name.json" ||
    die "heavy caller $* failed"
}

# mounts_bench NAME COUNT RUNS runs corral bench inside a private mount
# namespace holding COUNT extra tmpfs mounts, so the host's mount table is
# untouched.
mounts_bench() {
  local name=$1 count=$2 runs=$3
  unshare -m --propagation private sh -c '
    set -e
    base=$1 count=$2 ws=$3 user=$4; shift 4
    mkdir -p "$base"
    i=0
    while [ "$i" -lt "$count" ]; do
      mkdir -p "$base/m$i"
      mount -t tmpfs -o size=4k corral-bench "$base/m$i"
      i=$((i + 1))
    done
    cd "$ws" && runuser -u "$user" -- env HOME="$ws/../home" TMPDIR="$ws" "$@"
  ' sh "$dir/mnt-$name" "$count" "$ws" "$user" "$dir/corral" bench --runs "$runs" --json >"$dir/$name.json" ||
    die "corral bench with $count extra mounts failed"
}

started=$(date +%s)
echo "corral bench: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d" " -f1 /proc/loadavg), Linux $(uname -r), as $user, inits from $(basename "$init_bin")"
echo

# timed CSV HYPERFINE-ARGS... times whole commands as the user (20 warm-up
# runs each) into $ws/CSV.
timed() {
  local csv=$1
  shift
  (cd "$ws" && as_user hyperfine -N --style none --warmup 20 --runs "$hf_runs" --export-csv "$ws/$csv" "$@") \
    >/dev/null 2>"$dir/hyperfine.err" || { cat "$dir/hyperfine.err" >&2; die "hyperfine failed"; }
}

# column CSV NAME EXPR prints EXPR, in ms, of the row NAME of hyperfine's
# CSV: $4 is the median, $5 and $6 the mean user and system time.
column() { awk -F, -v n="$2" '$1 == n { printf "%.3f", ('"$3"') * 1000 }' "$ws/$1"; }
median_ms() { column "$1" "$2" '$4'; }
cpu_ms() { column floors.csv "$1" '$5 + $6'; }

# Whole commands: what a caller that execs a sandbox per tool call pays.
bwrap_cmd="$bwrap $(printf '%s ' --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind "$ws" "$ws" --unshare-user --unshare-pid --new-session --die-with-parent --chdir "$ws") /bin/true"
timed whole.csv \
  -n corral "$dir/corral run --workspace $ws -- /bin/true" \
  -n bwrap "$bwrap_cmd" \
  -n bare /bin/true
cli_ms=$(median_ms whole.csv corral) bwrap_ms=$(median_ms whole.csv bwrap) bare_ms=$(median_ms whole.csv bare)
cli_exact=$(exact "$cli_ms / $bwrap_ms") cli_ratio=$(calc "$cli_ms / $bwrap_ms")
echo "whole commands (hyperfine, $hf_runs runs), median ms"
printf '  %-28s %9s\n' "bare /bin/true" "$bare_ms" "bwrap" "$bwrap_ms"
printf '  %-28s %9s  %sx bwrap\n' "corral run" "$cli_ms" "$cli_ratio"
echo

# Floors: what a sandbox pays on this machine before doing any work of its
# own. The init exits at once when started by hand (status 125, hence -i),
# so its run is the Go runtime's start-up alone; `corral version` is the
# CLI's; bwrap with only the user and mount namespaces it always creates is
# a small C program entering namespaces and execing a command.
timed floors.csv -i \
  -n init "$init_bin __sandbox-init" \
  -n cli "$dir/corral version" \
  -n bwrap-min "$bwrap --bind / / /bin/true" \
  -n bare /bin/true
floor_ms() { median_ms floors.csv "$1"; }
echo "floors (hyperfine, $hf_runs runs), median ms, CPU ms (user + system, mean)"
printf '  %-28s %9s %7s\n' "bare /bin/true" "$(floor_ms bare)" "$(cpu_ms bare)" \
  "init start-up alone" "$(floor_ms init)" "$(cpu_ms init)" \
  "corral version" "$(floor_ms cli)" "$(cpu_ms cli)" \
  "bwrap --bind / / /bin/true" "$(floor_ms bwrap-min)" "$(cpu_ms bwrap-min)"
echo

# The library path: spawns from inside a process, as an agent makes them.
bench heap0 --vs-bwrap
bench heap2g --vs-bwrap --parent-heap 2GiB
bench par8 --vs-bwrap --parallel 8
bench mcp --vs-mcp
p50=$(json_field "$dir/heap0.json" p50_us)
p50_2g=$(json_field "$dir/heap2g.json" p50_us)
lib_exact=$(json_field "$dir/heap0.json" ratio_p50) lib_ratio=$(calc "$lib_exact")
heap_exact=$(exact "$p50_2g / $p50") heap_ratio=$(calc "$p50_2g / $p50")
rss=$(json_field "$dir/heap0.json" init_rss_kb)
idle=$(json_field "$dir/heap0.json" idle_rss_kb)
par_exact=$(json_field "$dir/par8.json" ratio_per_sec) par_ratio=$(calc "$par_exact")
echo "library (corral bench, $runs runs), p50 µs"
printf '  %-28s %9s  bwrap %6s  %sx bwrap\n' \
  "parent heap 0" "$p50" "$(json_field "$dir/heap0.json" bwrap_p50_us)" "$lib_ratio" \
  "parent heap 2GiB" "$p50_2g" "$(json_field "$dir/heap2g.json" bwrap_p50_us)" "$(calc "$(json_field "$dir/heap2g.json" ratio_p50)")"
printf '  %-28s %9s  bwrap %6s  %sx bwrap\n' "parallel 8, spawns/s" \
  "$(json_field "$dir/par8.json" per_sec)" "$(json_field "$dir/par8.json" bwrap_per_sec)" "$par_ratio"
printf '  %-28s %9s KiB\n' "init peak RSS" "$rss"
printf '  %-28s %9s KiB, %s KiB private, mean of %s\n' "idle RSS per ready init" "$idle" \
  "$(json_field "$dir/heap0.json" idle_private_kb)" "$(json_field "$dir/heap0.json" idle_inits)"
mcp_exact=$(json_field "$dir/mcp.json" ratio_mcp_p50) mcp_ratio=$(calc "$mcp_exact")
printf '  %-28s %9s  library %4s  %sx library\n' "MCP shell call of true" \
  "$(json_field "$dir/mcp.json" mcp_p50_us)" "$(json_field "$dir/mcp.json" mcp_library_p50_us)" "$mcp_ratio"

slope=""
if [ "$(id -u)" = 0 ]; then
  # Short runs in pairs, none and extra in alternating order, so a drift in
  # the machine's load cancels in each pair's difference; the slope is the
  # median difference.
  chunk=$(((runs + 3) / 4))
  diffs=() p0=() pn=()
  for round in $(seq "$slope_rounds"); do
    order="0 $extra_mounts"
    [ $((round % 2)) = 0 ] && order="$extra_mounts 0"
    for count in $order; do
      mounts_bench "mounts$count" "$count" "$chunk"
    done
    a=$(json_field "$dir/mounts0.json" p50_us) b=$(json_field "$dir/mounts$extra_mounts.json" p50_us)
    p0+=("$a") pn+=("$b") diffs+=("$((b - a))")
  done
  slope=$(calc "$(median "${diffs[@]}") / $extra_mounts")
  printf '  %-28s %9s  none %7s  %s µs per mount (median of %s paired runs of %s)\n' \
    "$extra_mounts extra host mounts" "$(median "${pn[@]}")" "$(median "${p0[@]}")" "$slope" "$slope_rounds" "$chunk"
else
  echo "  extra host mounts: skipped (needs root for a private mount namespace)"
fi
echo

# A caller whose own package init is heavy, with the inits run from its own
# binary and from the corral binary as helper. Without the helper each init
# pays the caller's start-up, so it is run a quarter as often.
heavy_bench heavy-self -runs "$(((runs + 3) / 4))"
heavy_bench heavy-helper -runs "$runs" -helper "$init_bin"
hh_p50=$(json_field "$dir/heavy-helper.json" p50_us)
hh_exact=$(json_field "$dir/heavy-helper.json" ratio_p50) hh_ratio=$(calc "$hh_exact")
hl_exact=$(exact "$hh_p50 / $p50") hl_ratio=$(calc "$hh_p50 / $p50")
hh_idle=$(json_field "$dir/heavy-helper.json" idle_rss_kb)
echo "heavy caller (64 MiB, 30 ms CPU of package init; corral bench's phases), p50 µs"
for kind in self helper; do
  f=$dir/heavy-$kind.json
  printf '  %-28s %9s  bwrap %6s  %sx bwrap  %s spawns/s (bwrap %s)  idle RSS %s KiB, %s private\n' \
    "inits from $( [ $kind = self ] && echo "its own binary" || basename "$init_bin")" \
    "$(json_field "$f" p50_us)" "$(json_field "$f" bwrap_p50_us)" "$(calc "$(json_field "$f" ratio_p50)")" \
    "$(json_field "$f" per_sec)" "$(json_field "$f" bwrap_per_sec)" "$(json_field "$f" idle_rss_kb)" \
    "$(json_field "$f" idle_private_kb)"
done

echo

# target NAME VALUE OP LIMIT SHOWN prints PASS or MISS for VALUE OP LIMIT.
missed=0
target() {
  if awk "BEGIN { exit !($2 $3 $4) }"; then
    printf '  PASS  %-38s %s\n' "$1" "$5"
  else
    printf '  MISS  %-38s %s\n' "$1" "$5"
    missed=$((missed + 1))
  fi
}
echo "targets (issues 6 and 18)"
target "library p50 <= 0.5x bwrap" "$lib_exact" "<=" 0.5 "${lib_ratio}x"
target "heap 2GiB p50 <= 1.2x heap 0" "$heap_exact" "<=" 1.2 "${heap_ratio}x"
target "CLI p50 <= 1.5x bwrap" "$cli_exact" "<=" 1.5 "${cli_ratio}x"
target "parallel 8 spawns/s >= 1.2x bwrap" "$par_exact" ">=" 1.2 "${par_ratio}x"
target "init peak RSS <= 8 MiB" "$rss" "<=" 8192 "$rss KiB"
target "idle RSS per ready init <= 6 MiB" "$idle" "<=" 6144 "$idle KiB"
target "heavy caller + helper p50 <= 0.5x bwrap" "$hh_exact" "<=" 0.5 "${hh_ratio}x"
target "heavy + helper p50 <= 1.1x light" "$hl_exact" "<=" 1.1 "${hl_ratio}x"
target "heavy + helper idle RSS <= 6 MiB" "$hh_idle" "<=" 6144 "$hh_idle KiB"
target "MCP shell call p50 <= 1.3x library" "$mcp_exact" "<=" 1.3 "${mcp_ratio}x (issue 19)"
if [ -n "$slope" ]; then
  printf '  INFO  %-38s %s µs\n' "spawn time per extra host mount" "$slope"
fi
# What the two throughput and CLI targets leave, against the floors above.
cores=$(nproc)
budget=$(calc "1000 * $cores / (1.2 * $(json_field "$dir/par8.json" bwrap_per_sec))")
printf '  INFO  %-38s %s ms CPU; /bin/true + init start-up: %s\n' "1.2x bwrap's rate leaves per spawn" \
  "$budget" "$(calc "$(cpu_ms bare) + $(cpu_ms init)")"
printf '  INFO  %-38s %s ms; corral version + init start-up: %s\n' "1.5x the bwrap command is" \
  "$(calc "1.5 * $bwrap_ms")" "$(calc "$(floor_ms cli) + $(floor_ms init)")"
echo
echo "$missed missed, $(($(date +%s) - started))s"
if [ "${BENCH_STRICT:-0}" = 1 ] && [ "$missed" != 0 ]; then
  exit 1
fi
