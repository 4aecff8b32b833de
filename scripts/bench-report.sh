#!/usr/bin/env bash
# The cost of the violation report: build steps in a sandbox with the
# report (every write-intent call stops in the init's listener), with the
# report of reads too and a hidden path (--report-reads: every open and
# exec stops there too), against the same with --no-report. Four shapes:
# a shell loop creating 10,000 files (one openat per file and nothing else,
# the worst case for writes), tar extracting them (openat, fchmod, utimensat
# per file), cat reading them (one read-only openat per file, the worst case
# for reads) and a shell loop starting /bin/true 1,000 times (an exec and
# the loader's opens per process). Run by `make bench` after `make build`;
# as root it measures as the unprivileged user corral-test.
#
# Environment: HYPERFINE_RUNS runs per command (default 10); BENCH_CPU=1
# also counts the CPU time of each (perf stat's task-clock over the corral
# process and all it starts, inits and commands included), which a loaded
# machine changes far less than the wall-clock time.
set -euo pipefail

corral=${1:-bin/corral}
runs=${HYPERFINE_RUNS:-10}
command -v hyperfine >/dev/null || { echo "bench-report: hyperfine not found on PATH" >&2; exit 1; }
[ -x "$corral" ] || { echo "bench-report: $corral not built (run make build)" >&2; exit 1; }
if [ -n "${BENCH_CPU:-}" ]; then
  command -v perf >/dev/null || { echo "bench-report: BENCH_CPU needs perf on PATH" >&2; exit 1; }
fi

dir=$(mktemp -d /tmp/corral-bench-report.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$corral" "$dir/corral"
# corral-init beside corral: the small binary its sandboxes run their init
# from (make build builds both).
init_helper=$(dirname "$corral")/corral-init
if [ -x "$init_helper" ]; then cp "$init_helper" "$dir/corral-init"; fi
ws=$dir/ws
mkdir "$ws" "$dir/home" "$dir/src" "$dir/secret"
for i in $(seq 10000); do echo x >"$dir/src/f$i"; done
tar cf "$ws/src.tar" -C "$dir/src" .
mv "$dir/src" "$ws/src"
if [ "$(id -u)" = 0 ]; then
  user=corral-test
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
  chown -R "$user:$user" "$dir"
  as_user() { runuser -u "$user" -- env HOME="$dir/home" "$@"; }
else
  as_user() { env HOME="$dir/home" "$@"; }
fi
cd "$ws"
declare -A shapes=(
  [loop]='rm -rf d && mkdir d && cd d && for i in $(seq 10000); do echo x > f$i; done'
  [untar]='rm -rf d && mkdir d && tar xf src.tar -C d'
  [cat]='cat src/* >/dev/null'
  [spawn]='for i in $(seq 1000); do /bin/true; done'
)
declare -A modes=(
  [off]="--no-report"
  [on]="--report $dir/r.jsonl"
  [hide]="--report $dir/r.jsonl --report-reads --hide $dir/secret"
)
order=(loop untar cat spawn)
args=()
for s in "${order[@]}"; do
  for m in off on hide; do
    args+=(-n "$s-$m" "$dir/corral run ${modes[$m]} -- sh -c '${shapes[$s]}'")
  done
done
as_user hyperfine -N --warmup 2 --runs "$runs" --export-json "$dir/report.json" ${BENCH_SHOW:+--show-output} \
  "${args[@]}" >/dev/null
# Medians: the machine may be shared, and the mean follows its outliers.
awk '
  /"command":/ { gsub(/[",]/, "", $2); name = $2 }
  /"median":/ { gsub(/,/, "", $2); m[name] = $2 * 1000 }
  END {
    split("loop untar cat spawn", order, " ")
    what["loop"] = "10k files by a shell loop"; what["untar"] = "10k files by tar"
    what["cat"] = "10k files read by cat"; what["spawn"] = "1000 processes"
    for (i = 1; i <= 4; i++) {
      s = order[i]
      printf "bench-report: %s: off %.0f ms, on %.0f ms (%.2fx), with reads %.0f ms (%.2fx); target <= 1.15x\n",
        what[s], m[s "-off"], m[s "-on"], m[s "-on"] / m[s "-off"], m[s "-hide"], m[s "-hide"] / m[s "-off"]
    }
  }' "$dir/report.json"
if [ -n "${BENCH_CPU:-}" ]; then
  for s in "${order[@]}"; do
    line="bench-report: CPU, $s:"
    for m in off on hide; do
      # task-clock in ms, the mean of the runs.
      ms=$(perf stat -x, -e task-clock -r "$runs" -- \
        bash -c "$(declare -f as_user); user=${user:-}; dir=$dir; as_user $dir/corral run ${modes[$m]} -- sh -c '${shapes[$s]}' >/dev/null 2>&1" \
        2>&1 >/dev/null | awk -F, '/task-clock/ { printf "%.0f", $1 }')
      line="$line $m ${ms} ms"
    done
    echo "$line"
  done
fi
