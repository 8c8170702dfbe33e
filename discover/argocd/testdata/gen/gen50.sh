#!/usr/bin/env bash
# gen50.sh DIR: writes a repository of 50 Argo CD Applications for measuring
# kiln lint (docs/argocd.md): 20 Helm (one chart, values per Application and a
# parameter), 20 kustomize (one base, namePrefix and images per Application),
# 10 directories, a root Application rendering apps/ (app of apps), and
# argocd.repoURLs in .kiln.yaml. The same DIR always gets the same bytes.
set -eu
d=$1
repo=https://git.example.com/platform/fleet.git
mkdir -p "$d/apps" "$d/charts/svc/templates" "$d/kustomize/base" "$d/plain"
printf 'argocd:\n  repoURLs: [%s]\n' "$repo" >"$d/.kiln.yaml"
cat >"$d/charts/svc/Chart.yaml" <<'X'
apiVersion: v2
name: svc
version: 0.1.0
X
cat >"$d/charts/svc/values.yaml" <<'X'
replicas: 1
image: registry.example.com/svc:1.0
runAsNonRoot: true
X
cat >"$d/charts/svc/templates/deployment.yaml" <<'X'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      securityContext:
        runAsNonRoot: {{ .Values.runAsNonRoot }}
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: app
        image: {{ .Values.image }}
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
X
cat >"$d/kustomize/base/kustomization.yaml" <<'X'
resources: [deployment.yaml]
X
cat >"$d/kustomize/base/deployment.yaml" <<'X'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
X
cat >"$d/plain/cm.yaml" <<'X'
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data: {a: "1"}
X
app() { # name ns source-body
  cat >"$d/apps/$1.yaml" <<X
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: $1
  namespace: argocd
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: $2}
  source:
    repoURL: $repo
$3
X
}
for i in $(seq -w 1 20); do
  root=true; [ $((10#$i % 5)) -eq 0 ] && root=false
  app "helm-$i" "team-$i" "    path: charts/svc
    helm:
      valuesObject: {replicas: $((10#$i % 3 + 1))}
      parameters:
      - name: runAsNonRoot
        value: \"$root\""
done
for i in $(seq -w 1 20); do
  app "kust-$i" "team-$i" "    path: kustomize/base
    kustomize:
      namePrefix: k$i-
      images: [nginx:1.27.$((10#$i))]"
done
for i in $(seq -w 1 10); do
  app "dir-$i" "team-$i" "    path: plain"
done
cat >"$d/root.yaml" <<X
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: root
  namespace: argocd
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
  source:
    repoURL: $repo
    path: apps
X
