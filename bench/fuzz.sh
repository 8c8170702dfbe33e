#!/usr/bin/env bash
# make fuzz: run every Go fuzz target in the module for a short time each
# (FUZZTIME, default 10s). Crashers land in the package's testdata/fuzz/ and
# become regression tests that `go test` replays.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "== $pkg $f ($t)"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "$pkg"
  done
done
