#!/usr/bin/env bash
# Runs every package's tests as an unprivileged user. As root it creates the
# user (corral-test) when missing, builds each test binary as root and runs it
# as that user from a directory the user owns. As a normal user it does
# nothing: `go test ./...` already ran unprivileged.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
  echo "test-unprivileged: already unprivileged, covered by go test"
  exit 0
fi
user=corral-test
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
# A supplementary group, for the tests of files in another of the user's
# groups (changeset copy-up).
getent group corral-test-extra >/dev/null || groupadd corral-test-extra
id -nG "$user" | grep -qw corral-test-extra || usermod -aG corral-test-extra "$user"
dir=$(mktemp -d /tmp/corral-unpriv.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
go=${GO:-go}
pass=0 fail=0
while read -r pkg src; do
  name=$(echo "$pkg" | tr / _)
  $go test -c -o "$dir/$name.test" "$pkg"
  chmod 755 "$dir/$name.test"
  mkdir -p "$dir/$name.run"
  # The package's testdata, as go test gives it: its files and the fuzz
  # targets' seed corpora are read relative to the working directory.
  if [ -d "$src/testdata" ]; then
    cp -R "$src/testdata" "$dir/$name.run/testdata"
    chmod -R a+rX "$dir/$name.run/testdata"
  fi
  chown "$user" "$dir/$name.run"
  if (cd "$dir/$name.run" && runuser -u "$user" -- env HOME="$dir/$name.run" TMPDIR="$dir/$name.run" "$dir/$name.test" -test.count=1 >"$dir/$name.log" 2>&1); then
    echo "ok   $pkg (unprivileged)"
    pass=$((pass + 1))
  else
    echo "FAIL $pkg (unprivileged)"
    cat "$dir/$name.log"
    fail=$((fail + 1))
  fi
done < <($go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./...)
echo "unprivileged: $pass passed, $fail failed"
[ "$fail" = 0 ]
