#!/usr/bin/env bash
# Real work in the workspace, and the workspace's size, side by side (issue
# 28). Run by `make bench` after `make build`; see docs/benchmarks.md.
#
# 1. Workloads: each runs bare, under bubblewrap with the same isolation as
#    scripts/bench.sh gives it (read-only root, the workspace writable,
#    /dev, /proc, a private /tmp, user and PID namespaces) and under
#    `corral run`, in a workspace of its own, with hyperfine; a --prepare
#    step puts the workspace back before every run, so each run does the
#    same work. Medians, and corral's over bubblewrap's (target <= 1.2x,
#    goal 1.1x).
# 2. A sweep of project-shaped workspaces (a node_modules-like vendor tree
#    of 10 files a directory, nested git repositories, a .vscode): `corral
#    run -- /bin/true` (hyperfine median) and `corral bench --workspace`
#    (the library's p50) on each, over the same on an empty workspace
#    (target <= 1.15x).
#
# As root it measures as the unprivileged user corral-test (created when
# missing), as agents run, with HOME beside the workspaces. The fixtures
# lie under /var/tmp: bubblewrap's /tmp and corral's are private.
#
# Environment: WORK_RUNS runs per workload and mode (default 3),
# WORK_WARMUP warm-up runs each (default 1), WORKLOADS the workloads to run
# (default all: extract clone commit venv files go npm), SWEEP_RUNS runs
# per size of `corral run` and spawns per `corral bench` (default 100),
# BENCH_HUGE=1 adds the workspace of 1M files (minutes to create),
# SWEEP=0 skips the sweep.
set -euo pipefail

corral=${1:-bin/corral}
work_runs=${WORK_RUNS:-3}
work_warmup=${WORK_WARMUP:-1}
workloads=${WORKLOADS:-extract clone commit venv files go npm}
sweep_runs=${SWEEP_RUNS:-100}

die() { echo "bench-work: $*" >&2; exit 1; }
for tool in hyperfine bwrap git tar awk; do
  command -v "$tool" >/dev/null || die "$tool not found on PATH (scripts/deps.sh test bench installs them)"
done
[ -x "$corral" ] || die "$corral not built (run make build)"
bwrap=$(command -v bwrap)
git=$(command -v git)
# The system's python3: one under root's home (pyenv) is not the user's.
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3 || true)

dir=$(mktemp -d /var/tmp/corral-bench-work.XXXXXX)
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM HUP
chmod 755 "$dir"
cp "$corral" "$dir/corral"
# corral-init beside corral: the small binary its sandboxes run their init
# from (make build builds both).
init_helper=$(dirname "$corral")/corral-init
if [ -x "$init_helper" ]; then cp "$init_helper" "$dir/corral-init"; fi
chmod 755 "$dir"/corral*
mkdir "$dir/home" "$dir/fix"

# as_user runs a command as the measuring user, HOME beside the
# workspaces (corral refuses a workspace that is the home or holds it).
if [ "$(id -u)" = 0 ]; then
  user=corral-test
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
  chown "$user:" "$dir" "$dir/home" "$dir/fix"
  as_user() { runuser -u "$user" -- env HOME="$dir/home" GIT_CONFIG_NOSYSTEM=1 "$@"; }
else
  user=$(id -un)
  as_user() { env HOME="$dir/home" GIT_CONFIG_NOSYSTEM=1 "$@"; }
fi

started=$(date +%s)
echo "bench-work: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d" " -f1 /proc/loadavg), Linux $(uname -r), as $user"

# mktree DIR N DIRS makes N small files spread over DIRS directories in DIR.
mktree() {
  as_user "$python" - "$@" <<'EOF'
import os, sys
root, n, dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    d = os.path.join(root, "d%d" % (i % dirs))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % (i // dirs)), "w") as f:
        f.write("%d\n" % i)
EOF
}

# repo DIR commits what DIR holds as a new repository.
repo() {
  as_user "$git" -C "$1" init -q
  as_user "$git" -C "$1" config user.name bench
  as_user "$git" -C "$1" config user.email bench@example.com
  as_user "$git" -C "$1" config gc.auto 0
  as_user "$git" -C "$1" add -A
  as_user "$git" -C "$1" commit -qm init
}

# $dir/aside PATH... is the --prepare step that moves what a run left out
# of the way, into $dir/trash, deleted with $dir at the end. Deleting
# thousands of files just before a run would make that run's file creation
# pay for it (ext4 without a journal skips, one by one, the inodes freed
# in the last minute before it reuses one), alike in every mode, which
# hides the differences between them.
as_user mkdir "$dir/trash"
cat >"$dir/aside" <<EOF
#!/bin/sh
for p in "\$@"; do
  if [ -e "\$p" ]; then mv "\$p" "$dir/trash/\$\$-\$(date +%s%N)"; fi
done
EOF
chmod 755 "$dir/aside"
aside=$dir/aside

# ms CSV NAME prints the median, in ms, of the row NAME of hyperfine's CSV.
ms() { awk -F, -v n="$2" '$1 == n { printf "%.1f", $4 * 1000 }' "$1"; }
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }

# workload ID LABEL PREPARE WORK times the shell command WORK (no single
# quotes) in the workspace $dir/ws-ID bare, under bubblewrap and under
# corral run, each run after the shell command PREPARE, and prints a row.
workload() {
  local name=$2 ws=$dir/ws-$1 prepare=$3 work=$4 csv=$dir/$1.csv
  local bw="$bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $ws $ws --unshare-user --unshare-pid --new-session --die-with-parent --chdir $ws"
  as_user hyperfine -N --style none --warmup "$work_warmup" --runs "$work_runs" --export-csv "$csv" \
    --prepare "sh -c '$prepare'" \
    -n bare "sh -c 'cd $ws && $work'" \
    -n bwrap "$bw sh -c '$work'" \
    -n corral "$dir/corral run --workspace $ws -- sh -c '$work'" \
    >/dev/null 2>"$dir/hyperfine.err" || { cat "$dir/hyperfine.err" >&2; die "$name: hyperfine failed"; }
  local b w c
  b=$(ms "$csv" bare) w=$(ms "$csv" bwrap) c=$(ms "$csv" corral)
  printf '  %-42s %10s %10s %10s %7sx\n' "$name" "$b" "$w" "$c" "$(ratio "$c" "$w")"
}
skipped() { printf '  %-42s skipped: %s\n' "$1" "$2"; }
wants() { case " $workloads " in *" $1 "*) return 0 ;; esac; return 1; }

echo
echo "workloads in the workspace (hyperfine, $work_runs runs, $work_warmup warm-up, --prepare resets), median ms"
printf '  %-42s %10s %10s %10s %8s\n' "" bare bwrap corral "c/bwrap"

# The 11k-file tree the tarball and the repositories hold: 110 directories
# of 100 files.
if wants extract || wants clone || wants commit; then
  mktree "$dir/fix/repo" 11000 110
  repo "$dir/fix/repo"
fi

if wants extract; then
  as_user tar -cf "$dir/fix/tree.tar" -C "$dir/fix/repo" --exclude .git .
  ws=$dir/ws-extract
  as_user mkdir "$ws"
  workload extract "extract an 11k-file tarball" "$aside $ws/x" "mkdir x && tar -xf $dir/fix/tree.tar -C x"
fi

if wants clone; then
  ws=$dir/ws-clone
  as_user mkdir "$ws"
  workload clone "git clone, 11k files (file://)" "$aside $ws/clone" "git clone -q file://$dir/fix/repo clone"
fi

if wants commit; then
  # The workspace is the repository, as a project's is.
  ws=$dir/ws-commit
  as_user cp -a "$dir/fix/repo" "$ws"
  base=$(as_user "$git" -C "$ws" rev-parse HEAD)
  workload commit "git status + commit, 11k files" "cd $ws && git reset -q --hard $base" \
    "echo x >> d1/f1 && git status --porcelain >/dev/null && git commit -qam x"
  as_user "$git" -C "$ws" fsck --no-dangling >/dev/null 2>&1 || die "the commit workload's repository is damaged"
fi

if wants venv; then
  if [ -z "$python" ] || ! as_user "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    skipped "python3 -m venv" "no python3 with venv and ensurepip"
  else
    ws=$dir/ws-venv
    as_user mkdir "$ws"
    workload venv "python3 -m venv (with pip)" "$aside $ws/venv" "$python -m venv venv"
  fi
fi

if wants files; then
  ws=$dir/ws-files
  as_user mkdir "$ws"
  # shellcheck disable=SC2016 # expanded by the sandbox's shell
  workload files "5,000 empty files, shell loop" "$aside $ws/f" \
    'mkdir f && i=0 && while [ $i -lt 5000 ]; do : > f/$i; i=$((i + 1)); done'
fi

if wants go; then
  if ! gobin=$(command -v go); then
    skipped "go build, cold GOCACHE" "go not found on PATH"
  else
    ws=$dir/ws-go
    as_user mkdir -p "$ws/mod"
    printf 'module example.com/hello\n\ngo 1.22\n' | as_user tee "$ws/mod/go.mod" >/dev/null
    printf 'package main\n\nimport (\n\t"fmt"\n\t"net/http"\n)\n\nfunc main() { fmt.Println(http.StatusOK) }\n' |
      as_user tee "$ws/mod/main.go" >/dev/null
    workload go "go build, cold GOCACHE (net/http)" "$aside $ws/gocache $ws/gopath $ws/mod/hello" \
      "export GOCACHE=$ws/gocache GOPATH=$ws/gopath GOTOOLCHAIN=local GOFLAGS= && cd mod && $gobin build -o hello ."
  fi
fi

if wants npm; then
  ws=$dir/ws-npm
  if ! npmbin=$(command -v npm); then
    skipped "npm install" "npm not found on PATH"
  else
    as_user mkdir "$ws"
    printf '{ "name": "bench", "version": "1.0.0", "private": true, "dependencies": { "express": "4.21.2" } }\n' |
      as_user tee "$ws/package.json" >/dev/null
    # The tree is fetched once, bare, into a cache in the workspace; each
    # timed run installs it from there (--offline): the files, not the
    # network.
    npm_flags="--cache $ws/.npm --no-audit --no-fund --no-update-notifier --loglevel=error"
    # shellcheck disable=SC2086
    if ! (cd "$ws" && as_user timeout 180 "$npmbin" install $npm_flags >"$dir/npm.log" 2>&1); then
      skipped "npm install" "the registry ($(as_user "$npmbin" config get registry 2>/dev/null)) is not reachable: $(grep -m1 -i err "$dir/npm.log" || tail -1 "$dir/npm.log")"
    else
      n=$(find "$ws/node_modules" -type f | wc -l)
      workload npm "npm install --offline: express, $n files" "$aside $ws/node_modules" \
        "$npmbin install --offline $npm_flags"
    fi
  fi
fi

echo
echo "  target: corral <= 1.2x bwrap, goal 1.1x (issue 28)"

if [ "${SWEEP:-1}" = 0 ]; then
  echo
  echo "workspace size sweep: skipped (SWEEP=0)"
  echo
  echo "bench-work: $(($(date +%s) - started))s"
  exit 0
fi

# project DIR N makes a project-shaped workspace of about N files: a
# package and its sources in a git repository, a .vscode, nested
# repositories (packages/a, vendor/lib, one vendored package), and a
# node_modules-like vendor tree of 10 files a directory (10 directories a
# package, 100 files a package) making up the rest.
project() {
  local ws=$1 n=$2
  as_user mkdir "$ws"
  [ "$n" = 0 ] && return
  as_user "$python" - "$ws" "$n" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
made = 0
def w(path, text="x\n"):
    global made
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)
    made += 1
w(".vscode/settings.json", "{}\n")
w(".vscode/launch.json", "{}\n")
w("package.json", '{ "name": "project", "version": "1.0.0" }\n')
w(".gitignore", "node_modules/\n")
for i in range(20):
    w("src/m%d.js" % i)
for r in ("packages/a", "vendor/lib"):
    for i in range(10):
        w("%s/src/f%d.js" % (r, i))
k = 0
while made < n:
    w("node_modules/p%d/lib/d%d/f%d.js" % (k // 100, (k // 10) % 10, k % 10))
    k += 1
EOF
  repo "$ws"
  repo "$ws/packages/a"
  repo "$ws/vendor/lib"
  repo "$ws/node_modules/p0"
}

sizes="0 10000 100000"
[ "${BENCH_HUGE:-0}" = 1 ] && sizes="$sizes 1000000"
echo
echo "workspace size sweep: project-shaped (node_modules-like vendor tree, 10 files a directory; 4 git repositories; .vscode)"
echo "  corral run -- /bin/true: hyperfine, $sweep_runs runs, median ms; library: corral bench --workspace, $sweep_runs runs, p50 µs"
printf '  %-8s %9s %9s %11s %8s %14s %8s\n' size files bwrap "corral run" "x empty" "library p50" "x empty"
cli0="" lib0="" missed=0
for n in $sizes; do
  ws=$dir/ws-$n
  project "$ws" "$n"
  files=$(find "$ws" -type f | wc -l)
  csv=$dir/sweep-$n.csv
  bw="$bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $ws $ws --unshare-user --unshare-pid --new-session --die-with-parent --chdir $ws"
  (cd "$ws" && as_user hyperfine -N --style none --warmup 5 --runs "$sweep_runs" --export-csv "$csv" \
    -n corral "$dir/corral run --workspace $ws -- /bin/true" -n bwrap "$bw /bin/true") \
    >/dev/null 2>"$dir/hyperfine.err" || { cat "$dir/hyperfine.err" >&2; die "sweep $n: hyperfine failed"; }
  (cd "$ws" && as_user "$dir/corral" bench --runs "$sweep_runs" --workspace "$ws" --json) >"$dir/lib-$n.json" ||
    die "corral bench --workspace $ws failed"
  cli=$(ms "$csv" corral)
  lib=$(sed -n 's/^ *"p50_us": *\([0-9]*\).*/\1/p' "$dir/lib-$n.json")
  [ -z "$cli0" ] && cli0=$cli lib0=$lib
  cr=$(ratio "$cli" "$cli0") lr=$(ratio "$lib" "$lib0")
  case $n in 0) label=empty ;; 10000) label=10k ;; 100000) label=100k ;; 1000000) label=1M ;; *) label=$n ;; esac
  flag=""
  if [ "$n" != 0 ] && ! awk "BEGIN { exit !($cr <= 1.15 && $lr <= 1.15) }"; then flag="  MISS"; missed=$((missed + 1)); fi
  printf '  %-8s %9s %9s %11s %7sx %14s %7sx%s\n' "$label" "$files" "$(ms "$csv" bwrap)" "$cli" "$cr" "$lib" "$lr" "$flag"
  as_user rm -rf "$ws"
done
[ "${BENCH_HUGE:-0}" = 1 ] || echo "  1M        skipped: set BENCH_HUGE=1 (creating a million files takes minutes)"
echo "  target: each <= 1.15x empty (issue 28); $missed size(s) missed"
echo
echo "bench-work: $(($(date +%s) - started))s"
