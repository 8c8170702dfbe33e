#!/usr/bin/env bash
# make demo: what kiln catches in a typical first manifest (docs/tour/bad,
# linted and fixed in a temporary copy: the diff kiln fix makes and what it
# leaves to a person), then every example spec (examples/*/app.yaml with its
# compiled output checked in under out/) built into its out/ directory and
# linted clean.
# Exits non-zero if any example fails to build or lint clean.
# Usage: examples/demo.sh KILN
set -euo pipefail
kiln=${1:-bin/kiln}
case "$kiln" in */*) kiln="$(cd "$(dirname "$kiln")" && pwd)/$(basename "$kiln")" ;; esac
here=$(cd "$(dirname "$0")" && pwd)
status=0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$here/../docs/tour/bad" "$tmp/bad"
cd "$tmp"
echo "== 1. what kiln catches: kiln lint bad/ (a typical first Deployment)"
"$kiln" lint bad/ || true
echo
echo "== 2. what kiln fix repairs: kiln fix --dry-run bad/ (the diff; nothing is written)"
"$kiln" fix --dry-run bad/ || true
echo
echo "== 3. kiln fix bad/, then kiln lint bad/: what is left to a person"
"$kiln" fix bad/ >/dev/null 2>&1 || true
"$kiln" lint bad/ || true
cd - >/dev/null
echo
echo "== 4. the examples: kiln build each App spec, then kiln lint its output (clean)"
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
