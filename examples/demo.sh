#!/usr/bin/env bash
# Build every example spec (examples/*/app.yaml with its compiled output
# checked in under out/) into its out/ directory, and lint the output.
# Exits non-zero if any example fails to build or lint clean.
# Usage: examples/demo.sh KILN
set -euo pipefail
kiln=${1:-bin/kiln}
here=$(cd "$(dirname "$0")" && pwd)
status=0
for spec in "$here"/*/app.yaml; do
  dir=$(dirname "$spec")
  name=$(basename "$dir")
  [ -d "$dir/out" ] || continue
  echo "== $name: kiln build ${spec#$PWD/} -o ${dir#$PWD/}/out"
  if ! "$kiln" build "$spec" -o "$dir/out"; then
    echo "FAIL: $name does not build" >&2
    status=1
    continue
  fi
  echo "== $name: kiln lint ${dir#$PWD/}/out"
  if ! "$kiln" lint "$dir/out"; then
    echo "FAIL: $name output has findings" >&2
    status=1
  fi
done
if [ "$status" -eq 0 ]; then
  echo "demo: every example builds and lints clean"
fi
exit "$status"
