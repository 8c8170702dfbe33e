#!/usr/bin/env bash
# Builds kube-apiserver v1.37.2 and etcd (the version k8s.io/kubernetes v1.37.2
# pins) from the Go module proxy into a cache directory, once: a second run
# with the binaries in place does nothing. Prints the directory.
#   KILN_SERVERS_DIR  where the binaries go (default: $XDG_CACHE_HOME/kiln/servers-v1.37.2)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${KILN_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/servers-v1.37.2}"
mkdir -p "$dir"
cd "$here/tools"
ver=v1.37.2
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$ver -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/client-go/pkg/version.gitVersion=$ver"
if [ ! -x "$dir/kube-apiserver" ]; then
  echo "building kube-apiserver $ver (about 15 minutes on 2 cores, once)" >&2
  go build -trimpath -ldflags "$ldflags" -o "$dir/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
  mv "$dir/kube-apiserver.tmp" "$dir/kube-apiserver"
fi
if [ ! -x "$dir/etcd" ]; then
  echo "building etcd (about 2 minutes, once)" >&2
  go build -trimpath -ldflags "-s -w" -o "$dir/etcd.tmp" ./etcd
  mv "$dir/etcd.tmp" "$dir/etcd"
fi
echo "$dir"
