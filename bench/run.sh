#!/usr/bin/env bash
# make bench: kiln lint over generated corpora of 1,000, 10,000, 50,000 and
# 200,000 objects (SIZES= others; the two large ones take about 15 minutes
# on 2 cores and 400 MB of disk, one run each: LARGE_RUNS=).
# Prints objects/s, wall and CPU seconds and peak RSS for (a) a bare YAML
# parse + decode of the same files, (b) Pod Security Admission only, and
# (c) everything: PSA, ten users' ValidatingAdmissionPolicies
# (bench/policies) and kiln's own rules, without the content cache; for
# 10,000 objects and fewer, (c) again with the content cache: cold (an empty
# cache, which the run fills), warm (the input unchanged since) and with one
# file changed (a comment appended to one file before each run, so that its
# objects are judged afresh and the rest replayed); then one small file (bench/small.yaml,
# the start-up a pre-commit hook or an editor pays on every run) and, when
# REALWORLD (default ../shared/realworld) holds them, the argo-workflows and
# argo-cd deploy trees (kustomize builds of large CRDs), each with its bare
# parse beside it; then a 70-release Flux fleet, cold and warm (e); then Go micro-benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
# The corpus generator (stdlib-only Python 3) lives in bench/; GEN overrides it.
GEN=${GEN:-bench/gen-corpus}
if ! command -v python3 >/dev/null; then
  echo "make bench: needs python3 to run $GEN (apt-get install python3)" >&2
  exit 2
fi
if [ ! -f "$GEN" ]; then
  echo "make bench: no corpus generator at $GEN; set GEN=path/to/gen-corpus" >&2
  exit 2
fi
OUT=bench/out
mkdir -p "$OUT"
go build -o "$OUT/measure" ./tools/measure
go build -o "$OUT/parseonly" ./tools/parseonly
KILN=${KILN:-bin/kiln}
[ -x "$KILN" ] || go build -o "$KILN" ./cmd/kiln
# Runs use a copy written by cat, as a downloaded binary is:
# the linker writes through a memory map, and Linux (6.18, ext4) keeps a file
# written so in 2 MiB pages that it maps whole, so that a fresh build starts
# 30-35 ms faster and counts 25-30 MB more peak RSS than the same
# binary installed (README, "Start-up and the page cache").
cat "$KILN" > "$OUT/kiln" && chmod +x "$OUT/kiln"
KILN=$OUT/kiln
printf 'rules: {"*": off, "psa/*": on}\n' > "$OUT/psa-only.yaml"
printf '# defaults\n' > "$OUT/all.yaml"

export RUNS=${RUNS:-3} # each row: median of RUNS runs, largest peak RSS
echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3); rows are medians of $RUNS runs (peak RSS: the largest)"
echo "| run                          | objects |  objects/s |  wall s |   cpu s |  RSS MB |"
echo "|------------------------------|---------|------------|---------|---------|---------|"
small_runs=$RUNS
for n in ${SIZES:-1000 10000 50000 200000}; do
  RUNS=$small_runs
  [ "$n" -le 10000 ] || RUNS=${LARGE_RUNS:-1}
  dir="$OUT/corpus-$n"
  [ -d "$dir" ] || python3 "$GEN" "$n" "$dir" >/dev/null 2>&1
  "$OUT/measure" "(a) parse only, $n" "$n" -- "$OUT/parseonly" "$dir"
  "$OUT/measure" "(b) PSA only, $n" "$n" -- "$KILN" lint --no-cache --config "$OUT/psa-only.yaml" -f json "$dir"
  "$OUT/measure" "(c) everything, $n" "$n" -- "$KILN" lint --no-cache --config "$OUT/all.yaml" --policy bench/policies -f json "$dir"
  [ "$n" -le 10000 ] || continue
  cache="$OUT/cache-$n"
  edited="$OUT/edited-$n"
  rm -rf "$cache" "$edited"
  cp -r "$dir" "$edited"
  one=$(ls "$edited" | head -n 1)
  RUNS=1 "$OUT/measure" "(c) cached: cold, $n" "$n" -- "$KILN" lint --cache-dir "$cache" --config "$OUT/all.yaml" --policy bench/policies -f json "$edited"
  "$OUT/measure" "(c) cached: warm, $n" "$n" -- "$KILN" lint --cache-dir "$cache" --config "$OUT/all.yaml" --policy bench/policies -f json "$edited"
  "$OUT/measure" "(c) cached: 1 file changed, $n" "$n" -- bash -c 'printf "# %s\n" "$(date +%s%N)" >> "$1/$2"; shift 2; exec "$@"' _ "$edited" "$one" \
    "$KILN" lint --cache-dir "$cache" --config "$OUT/all.yaml" --policy bench/policies -f json "$edited"
done
RUNS=$small_runs
"$OUT/measure" "(a) parse only, small file" 1 -- "$OUT/parseonly" bench/small.yaml
"$OUT/measure" "(c) everything, small file" 1 -- "$KILN" lint --no-cache --config "$OUT/all.yaml" -f json bench/small.yaml
REALWORLD=${REALWORLD:-../shared/realworld}
for tree in argo-workflows argo-cd; do
  [ -d "$REALWORLD/$tree" ] || continue
  "$OUT/measure" "(a) parse only, $tree" 0 -- "$OUT/parseonly" "$REALWORLD/$tree"
  "$OUT/measure" "(d) kiln lint, $tree" 0 -- "$KILN" lint --no-cache -f json "$REALWORLD/$tree"
  rm -rf "$OUT/cache-$tree"
  RUNS=1 "$OUT/measure" "(d) cached: cold, $tree" 0 -- "$KILN" lint --cache-dir "$OUT/cache-$tree" -f json "$REALWORLD/$tree"
  "$OUT/measure" "(d) cached: warm, $tree" 0 -- "$KILN" lint --cache-dir "$OUT/cache-$tree" -f json "$REALWORLD/$tree"
done
# (e) a Flux fleet (tools/fleet: the layout of ../shared/gitops/flux2-kustomize-helm-example) of FLEET
# HelmReleases (70) of the podinfo chart, its chart cache filled as kiln fetch fills it (from a Helm
# repository served in process): cold (no content cache: a new one each run) and warm. Budget on 2
# cores: cold <= 10 s, warm <= 1 s, peak RSS <= 256 MB.
GITOPS=${GITOPS:-../shared/gitops}
if [ -d "$GITOPS/charts/podinfo" ]; then
  n=${FLEET:-70}
  fleet="$OUT/fleet-$n"
  xdg="$OUT/fleet-xdg"
  rm -rf "$fleet" "$xdg" "$OUT/fleet-cache"
  go run ./tools/fleet -releases "$n" -chart "$GITOPS/charts/podinfo" -cache "$xdg/kiln/charts" "$fleet"
  "$OUT/measure" "(e) Flux fleet, $n releases, cold" 0 -- bash -c 'rm -rf "$1"; shift; exec "$@"' _ "$OUT/fleet-cache" \
    env XDG_CACHE_HOME="$xdg" "$KILN" lint --cache-dir "$OUT/fleet-cache" -f json "$fleet"
  "$OUT/measure" "(e) Flux fleet, $n releases, warm" 0 -- \
    env XDG_CACHE_HOME="$xdg" "$KILN" lint --cache-dir "$OUT/fleet-cache" -f json "$fleet"
fi
if [ -z "${NO_GOBENCH:-}" ]; then
  go test -run '^$' -bench . -benchtime 3x ./manifest/... ./rules/... ./compiler/... 2>/dev/null | grep -E '^(Benchmark|ok|PASS)' || true
fi
