#!/usr/bin/env bash
# Runs every native fuzz target of the module, one after another, each
# for FUZZTIME (default 30s) on one worker, at the lowest priority. A
# crasher fails the run; `go test` has written it under the package's
# testdata/fuzz/<Target>/, where, committed with the fix, it stays a
# regression input that every `go test` runs.
set -euo pipefail
fuzztime=${FUZZTIME:-30s}
failed=()
while IFS=: read -r file name; do
	dir=./$(dirname "$file")
	echo "== $name ($dir, $fuzztime)"
	if ! nice -n 19 go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -parallel 1 "$dir"; then
		failed+=("$name")
	fi
done < <(git grep -o -E '^func Fuzz[A-Za-z0-9_]+' -- '*_test.go' | sed 's/func //' | sort)
if ((${#failed[@]})); then
	echo "fuzz: failed: ${failed[*]}"
	exit 1
fi
echo "fuzz: every target ran for $fuzztime"
