#!/usr/bin/env bash
# The cost of guarding git: a commit inside a sandbox on a repository with
# about 10k objects, against the same commit under bubblewrap with the same
# isolation as scripts/bench.sh gives it (read-only root, the workspace
# writable, /dev, /proc, a private /tmp, user and PID namespaces), through
# `corral run` and through the library as agents link it (sandboxes built
# ahead; BenchmarkGitCommit/paired in integration/). Run by `make bench`
# after `make build`. As root it measures as the unprivileged user
# corral-test, as agents run.
#
# Environment: HYPERFINE_RUNS runs per command (default 60), also the
# number of commit pairs through the library.
set -euo pipefail

corral=${1:-bin/corral}
runs=${HYPERFINE_RUNS:-60}
for tool in hyperfine bwrap git go; do
  command -v "$tool" >/dev/null || { echo "bench-git: $tool not found on PATH" >&2; exit 1; }
done
[ -x "$corral" ] || { echo "bench-git: $corral not built (run make build)" >&2; exit 1; }

dir=$(mktemp -d /tmp/corral-bench-git.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$corral" "$dir/corral"
# corral-init beside corral: the small binary its sandboxes run their init
# from (make build builds both).
init_helper=$(dirname "$corral")/corral-init
if [ -x "$init_helper" ]; then cp "$init_helper" "$dir/corral-init"; fi
# The library's measurement is a benchmark of the integration tests.
CGO_ENABLED=0 go test -c -o "$dir/integration.test" ./integration/
ws=$dir/ws
# HOME lies beside the workspace: corral refuses a workspace that is the
# home or holds it.
mkdir "$ws" "$dir/home"
# 100 directories of 100 files: 10,000 blobs, 101 trees, a commit.
for i in $(seq 0 99); do
  mkdir "$ws/d$i"
  for j in $(seq 0 99); do echo "$i $j" >"$ws/d$i/f$j"; done
done
if [ "$(id -u)" = 0 ]; then
  user=corral-test
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
  chown -R "$user:$user" "$dir"
  as_user() { runuser -u "$user" -- env HOME="$dir/home" TMPDIR="$ws" GIT_CONFIG_NOSYSTEM=1 "$@"; }
else
  as_user() { env HOME="$dir/home" TMPDIR="$ws" GIT_CONFIG_NOSYSTEM=1 "$@"; }
fi
cd "$ws"
as_user git init -q .
as_user git config user.name bench
as_user git config user.email bench@example.com
as_user git config gc.auto 0
as_user git add -A
as_user git commit -qm init
echo "bench-git: $(as_user git count-objects -v | sed -n 's/^count: //p') objects"

# The same sandbox with .git left writable as is (allow_planting): what the
# staging itself costs.
printf '[[agents]]\nid = "b"\n[agents.sandbox]\nallow_planting = [".git"]\n' >"$dir/unstaged.toml"
commit="echo x >> d1/f1 && git commit -qam x"
bwrap="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $ws $ws --unshare-user --unshare-pid --new-session --die-with-parent --chdir $ws"
as_user hyperfine -N --warmup 5 --runs "$runs" --export-json "$dir/git.json" \
  -n bwrap "$bwrap sh -c '$commit'" \
  -n corral "$dir/corral run -- sh -c '$commit'" \
  -n corral-unstaged "$dir/corral run --config $dir/unstaged.toml -- sh -c '$commit'" \
  -n bwrap-no-commit "$bwrap sh -c 'echo x >> d1/f1'" \
  -n corral-no-commit "$dir/corral run -- sh -c 'echo x >> d1/f1'"
as_user git fsck --no-dangling >/dev/null || { echo "bench-git: the repository is damaged" >&2; exit 1; }
# Through the library: one commit in a sandbox built ahead, then the same
# under bubblewrap, in turn; the medians of each and of the pairs' ratios.
lib=$(cd "$dir" && as_user env TMPDIR="$dir" ./integration.test -test.run '^$' \
  -test.bench 'BenchmarkGitCommit/paired' -test.benchtime "${runs}x" | grep 'BenchmarkGitCommit/paired') ||
  { echo "bench-git: BenchmarkGitCommit/paired did not run (see: $dir/integration.test -test.bench GitCommit -test.v)" >&2; exit 1; }
# Medians: the machine may be shared, and the mean follows its outliers.
awk '
  /"command":/ { gsub(/[",]/, "", $2); name = $2 }
  /"median":/ { gsub(/,/, "", $2); m[name] = $2 * 1000 }
  END {
    printf "bench-git: median commit: bwrap %.1f ms, corral %.1f ms (%.2fx; target <= 1.2x)\n",
      m["bwrap"], m["corral"], m["corral"] / m["bwrap"]
    printf "bench-git: corral with .git unstaged %.1f ms (staging costs %.2fx)\n",
      m["corral-unstaged"], m["corral"] / m["corral-unstaged"]
    printf "bench-git: without the commit: bwrap %.1f ms, corral %.1f ms (start-up, the walks at start and exit)\n",
      m["bwrap-no-commit"], m["corral-no-commit"]
  }' "$dir/git.json"
echo "$lib" | awk '{
  for (i = 1; i < NF; i++) m[$(i + 1)] = $i
  printf "bench-git: through the library, %s pairs: median commit: bwrap %.1f ms, corral %.1f ms (median ratio %.2fx; target <= 1.2x)\n",
    $2, m["bwrap-ms"], m["corral-ms"], m["ratio"]
}'
