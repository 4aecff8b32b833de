#!/usr/bin/env bash
# make demo: an agent-style command tries to escape its workspace with the
# usual tricks, then does honest work inside it.
set -u
corral=$(realpath "${1:-bin/corral}")
demo=$(mktemp -d "$PWD/.demo.XXXXXX")
trap 'rm -rf "$demo"' EXIT
mkdir -p "$demo/workspace" "$demo/secrets"
echo "sk-demo-$(date +%s)" > "$demo/secrets/api-key"
cd "$demo/workspace"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
show() { say "corral run --hide ../secrets -- sh -c '$1'"; "$corral" run --hide "$demo/secrets" -- sh -c "$1"; echo "[exit $?]"; }

echo "workspace: $demo/workspace (writable); ../secrets is hidden; everything else is read-only"
show 'cat ../secrets/api-key'
show 'cp ../secrets/api-key /tmp/ && cat /tmp/api-key'
show 'python3 -c "print(open(\"../secrets/api-key\").read())" 2>&1 | tail -1'
show 'echo pwned >> ~/.bashrc'
show 'kill -9 1; ps ax'
show 'unshare -Ur id'
show 'git init -q . && git config core.fsmonitor "echo pwned" && mkdir .vscode && echo {} > .vscode/tasks.json && echo planted'
say "git -C $demo/workspace config core.fsmonitor; ls -A $demo/workspace   # on the host: nothing planted landed"
git -C "$demo/workspace" config core.fsmonitor || echo "(no core.fsmonitor)"
ls -A "$demo/workspace"
show 'echo "real work" > notes.txt && ls -l notes.txt'
say "cat $demo/workspace/notes.txt   # on the host, outside the sandbox"
cat "$demo/workspace/notes.txt"
