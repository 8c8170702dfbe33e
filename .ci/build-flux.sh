#!/usr/bin/env bash
# Builds the Flux CLI (the reference for Flux Kustomization builds) into $1.
set -euo pipefail
out=${1:?usage: build-flux.sh DIR}
version=v2.9.5
[ -x "$out/flux" ] && exit 0
src=$(go mod download -json github.com/fluxcd/flux2/v2@$version | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src/." "$work" && chmod -R u+w "$work"
mkdir -p "$work/cmd/flux/manifests" && echo '# none' > "$work/cmd/flux/manifests/empty.yaml"
mkdir -p "$out"
(cd "$work" && go build -o "$out/flux.tmp" ./cmd/flux)
mv "$out/flux.tmp" "$out/flux"
