#!/usr/bin/env bash
# Records the JobSet statuses of ../testdata: the JobSet v0.10.1 controller,
# its CRD and webhooks, against kube-apiserver v1.37.2 and etcd on 127.0.0.1
# (make servers builds them). No kube-controller-manager or kubelet runs:
# record.py sets child Job statuses as the Job controller would, and plays
# the garbage collector's part for Jobs deleted in the foreground.
#
#   bash examples/argocd/jobset/record/record.sh [OUTDIR]   # default: a temporary directory
#
# Needs Go (the controller is built once from the Go module proxy into
# ~/.cache/kiln/jobset-v0.10.1), openssl and python3 with PyYAML.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
servers=${KILN_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/servers-v1.37.2}
version=v0.10.1
cache=${XDG_CACHE_HOME:-$HOME/.cache}/kiln/jobset-$version
ctl=$cache/jobset-controller
if [ ! -x "$ctl" ]; then
  mkdir -p "$cache/src"
  (cd "$cache/src" && [ -f go.mod ] || (cd "$cache/src" && go mod init jobsetcontroller >/dev/null 2>&1))
  (cd "$cache/src" && GOFLAGS= go get sigs.k8s.io/jobset@$version && GOFLAGS= go build -o "$ctl" sigs.k8s.io/jobset)
fi
module=$(cd "$cache/src" && GOFLAGS= go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)

d=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done; rm -rf "$d"; }
trap cleanup EXIT
mkdir -p "$d/certs" "$d/webhook"
openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/webhook/tls.key" -out "$d/webhook/tls.crt" -days 1 \
  -subj /CN=jobset-webhook -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
echo "record-token,admin,admin,system:masters" > "$d/tokens.csv"
"$servers/etcd" --data-dir "$d/etcd" --listen-client-urls http://127.0.0.1:23791 --advertise-client-urls http://127.0.0.1:23791 \
  --listen-peer-urls http://127.0.0.1:23801 --initial-advertise-peer-urls http://127.0.0.1:23801 \
  --initial-cluster default=http://127.0.0.1:23801 --unsafe-no-fsync --log-level error > "$d/etcd.log" 2>&1 &
pids+=($!)
"$servers/kube-apiserver" --etcd-servers http://127.0.0.1:23791 --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
  --secure-port 26443 --cert-dir "$d/certs" --token-auth-file "$d/tokens.csv" --authorization-mode AlwaysAllow \
  --allow-privileged=true --endpoint-reconciler-type none --disable-admission-plugins ServiceAccount \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$d/sa.pub" \
  --service-account-signing-key-file "$d/sa.key" --service-cluster-ip-range 10.96.0.0/16 > "$d/apiserver.log" 2>&1 &
pids+=($!)
cat > "$d/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:26443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: record-token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
cat > "$d/jobset-config.yaml" <<CFG
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
internalCertManagement: {enable: false}
webhook: {port: 19443, host: 127.0.0.1, certDir: $d/webhook}
metrics: {bindAddress: "127.0.0.1:18443"}
health: {healthProbeBindAddress: "127.0.0.1:18081"}
leaderElection: {leaderElect: false}
CFG
python3 "$here/record.py" setup "$module" "$d/webhook/tls.crt"
(cd "$d" && KUBECONFIG="$d/kubeconfig" exec "$ctl" --config "$d/jobset-config.yaml" > "$d/jobset.log" 2>&1) &
pids+=($!)
sleep 5
python3 "$here/record.py" record "$out"
echo "recorded into $out"
