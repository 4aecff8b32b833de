#!/usr/bin/env bash
# Builds examples/basic the way a library user does: from a module of its
# own that requires corral through a replace, with cgo on, and without
# libseccomp: no package of the build may depend on it, pkg-config is made
# to fail (so a package asking for a C library breaks an uncached build),
# and the binary must not link it. Then runs it.
set -euo pipefail
repo=$(pwd)
go=${GO:-go}
dir=$(mktemp -d "${TMPDIR:-/tmp}/corral-userbuild.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp examples/basic/main.go "$dir/"
cd "$dir"
cat > go.mod <<MOD
module example.com/agent

go 1.26.0

require github.com/corralhq/corral v0.0.0

replace github.com/corralhq/corral => $repo
MOD
cp "$repo/go.sum" .
GOFLAGS=-mod=mod "$go" mod tidy >/dev/null
if ! command -v gcc >/dev/null; then
  echo "userbuild: gcc is needed to build with cgo (make deps installs it)" >&2
  exit 1
fi
if CGO_ENABLED=1 "$go" list -deps . | grep -q libseccomp; then
  echo "userbuild: a default cgo build depends on libseccomp:" >&2
  CGO_ENABLED=1 "$go" list -deps . | grep libseccomp >&2
  exit 1
fi
CGO_ENABLED=1 PKG_CONFIG=/bin/false "$go" build -o agent .
if ldd agent 2>/dev/null | grep -q libseccomp; then
  echo "userbuild: the binary links libseccomp:" >&2
  ldd agent >&2
  exit 1
fi
(cd "$repo" && "$dir/agent")
echo "userbuild: a cgo build without libseccomp builds and runs examples/basic"
