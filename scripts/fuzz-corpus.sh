#!/usr/bin/env bash
# Regenerates the fuzz targets' seed inputs made from real files: git
# writes indexes (versions 2, 3, 4, split, sparse, SHA-256, with
# resolve-undo, untracked-cache and offset-table extensions), configs and
# the state of a rebase, am and cherry-pick stopped half-way; curl sends
# proxy requests; the MCP SDK's client speaks JSON-RPC; corral's Export
# writes a changeset archive. Each package's TestFuzzSeeds turns them into
# testdata/fuzz/<Target>/ files. Run from the repository's top; commit
# what changes.
set -euo pipefail
top=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
realhome=$HOME
export GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE) GOPATH=$(go env GOPATH)
export GIT_CONFIG_NOSYSTEM=1 HOME=$work GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x
git config --global init.defaultBranch main
out=$work/git
mkdir -p "$out"

# A repository with nested directories, an executable, a symlink and
# names that need quoting.
repo() {
	rm -rf "$work/r" && git init -q "$@" "$work/r" && cd "$work/r"
	mkdir -p a/b/c d 'sp ace'
	echo 1 >a/b/c/f && echo 2 >d/g && echo 3 >'sp ace/é' && printf '#!/bin/sh\n' >x.sh && chmod +x x.sh
	ln -s a/b/c/f link
	git add -A && git commit -qm one
}

repo
for v in 2 3 4; do git update-index --index-version $v && cp .git/index "$out/index-v$v"; done
git add -N new 2>/dev/null || { echo n >new && git add -N new; }
cp .git/index "$out/index-v3-intent-to-add"
git reset -q new
git -c index.recordEndOfIndexEntries=true -c index.recordOffsetTable=true -c index.threads=2 update-index --index-version 4 --really-refresh
git -c index.recordEndOfIndexEntries=true -c index.recordOffsetTable=true -c index.threads=2 update-index --force-write-index 2>/dev/null ||
	git -c index.recordEndOfIndexEntries=true -c index.recordOffsetTable=true -c index.threads=2 add -A
cp .git/index "$out/index-v4-eoie-ieot"
git update-index --index-version 2 --untracked-cache && git status -s >/dev/null && cp .git/index "$out/index-untracked-cache"
git update-index --no-untracked-cache --split-index && echo 4 >d/h && git add d/h
cp .git/index "$out/index-split" && cp .git/sharedindex.* "$out/index-shared"
git update-index --no-split-index
cp .git/config "$out/config-plain"

# A merge conflict resolved: the resolve-undo extension.
git checkout -qb side && echo side >a/b/c/f && git commit -qam side
git checkout -q main && echo main >a/b/c/f && git commit -qam main
git merge -q side 2>/dev/null || true
cp .git/index "$out/index-conflict"
echo both >a/b/c/f && git add a/b/c/f && cp .git/index "$out/index-reuc"
git commit -qm merged

# A sparse index.
git sparse-checkout init --cone -q 2>/dev/null || git sparse-checkout init --cone
git sparse-checkout set a && git config index.sparse true && git sparse-checkout reapply
cp .git/index "$out/index-sparse"
git sparse-checkout disable

# Configs git wrote: remotes, branches, a submodule, values it quotes.
git remote add origin https://example.com/r.git
git branch -q --set-upstream-to=origin/main 2>/dev/null || git config branch.main.remote origin
git config core.hooksPath '/weird path/"q"'
git config 'remote.origin.fetch' '+refs/heads/*:refs/remotes/origin/*'
git config 'url.git@example.com:.insteadOf' 'https://example.com/'
git config user.name 'tab	and \ backslash ; #'
git config --add 'submodule.sub.url' '../sub'
cp .git/config "$out/config-written"

# State git resumes from: an interactive rebase stopped at a break, with
# a strategy and its options; am stopped on a conflict; a cherry-pick of
# several commits stopped on a conflict.
for i in 1 2 3; do echo $i >>d/g && git commit -qam "c$i"; done
GIT_SEQUENCE_EDITOR='sed -i "1i break"' git rebase -q -i -s ort -X theirs -X rename-threshold=50 --gpg-sign=ABCD HEAD~3 2>/dev/null || true
for f in git-rebase-todo git-rebase-todo.backup strategy strategy_opts gpg_sign_opt; do
	[ -f .git/rebase-merge/$f ] && cp .git/rebase-merge/$f "$out/state-$f"
done
git rebase --abort 2>/dev/null || true
git format-patch -q -1 -o "$work/patches" HEAD
git reset -q --hard HEAD~1 && echo other >d/g && git commit -qam other
git am -q --whitespace=fix -C1 "$work"/patches/*.patch 2>/dev/null || true
for f in apply-opt; do [ -f .git/rebase-apply/$f ] && cp .git/rebase-apply/$f "$out/state-$f"; done
git am --abort 2>/dev/null || true
git checkout -qb pick HEAD~1 && echo pick >>d/g && git commit -qam p1 && echo pick2 >>d/g && git commit -qam p2
git checkout -q main && echo clash >d/g && git commit -qam clash
git cherry-pick --strategy=ort -X patience pick~1 pick >/dev/null 2>&1 || true
for f in todo opts; do [ -f .git/sequencer/$f ] && cp .git/sequencer/$f "$out/state-$f"; done
git cherry-pick --abort 2>/dev/null || true

# SHA-256.
repo --object-format=sha256
for v in 2 4; do git update-index --index-version $v && cp .git/index "$out/index-sha256-v$v"; done
cp .git/config "$out/config-sha256"

cd "$top"
export HOME=$realhome
CORRAL_FUZZ_SEEDS=1 CORRAL_FUZZ_FROM=$out go test -count=1 -run '^TestFuzzSeeds$' ./internal/guard

# Proxy requests as curl sends them: through the HTTP proxy (CONNECT and
# absolute-form) and SOCKS5, each to a listener that records them.
CORRAL_FUZZ_SEEDS=1 go test -count=1 -run '^TestFuzzSeeds$' ./egress ./changeset ./mcpserver
