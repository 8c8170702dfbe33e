#!/usr/bin/env bash
# Builds the Flux CLI v2.9.5 (the reference of discover/flux: flux build kustomization
# --dry-run) into $1, once. `go install` refuses it (flux2's go.mod has a replace
# directive), so it is built as the main module from its module zip; cmd/flux embeds
# install manifests that flux2's Makefile generates and flux build never reads: one
# placeholder file satisfies the embed.
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
