#!/usr/bin/env bash
# Makes one hand-written slip at a time in docs/comparison/hand/storefront.yaml
# and prints what kiln lint finds (docs/comparison-score.md's table).
# Usage: docs/comparison/mistakes.sh KILN
set -euo pipefail
kiln=${1:-bin/kiln}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
slip() { # name, then a sed program applied to the hand-written file
  mkdir -p "$tmp/$1"
  sed -e "$2" "$here/hand/storefront.yaml" > "$tmp/$1/storefront.yaml"
  rules=$("$kiln" lint "$tmp/$1" 2>/dev/null | grep -oE '(error|warning) +[a-z]+/[A-Za-z_-]+' | awk '{print $2}' | sort | uniq -c | awk '{printf "%s%s x%d", sep, $2, $1; sep=", "}' || true)
  printf '| %s | %s |\n' "$1" "${rules:-(nothing found)}"
}
echo "| slip | kiln lint finds |"
echo "| --- | --- |"
slip "no allowPrivilegeEscalation: false" '/allowPrivilegeEscalation: false/d'
slip "capabilities not dropped" '/drop:/d; /- ALL/d'
slip "no runAsNonRoot" '/runAsNonRoot: true/d'
slip "no seccomp profile" '/seccompProfile:/d; /type: RuntimeDefault/d'
slip "Job pods restartPolicy Always" 's/restartPolicy: Never/restartPolicy: Always/'
slip "HTTPRoute path without /" 's|value: /api|value: api|'
slip "HTTPRoute hostname in capitals" 's/- shop.example.com/- Shop.example.com/'
slip "CronJob schedule of 4 fields" "s/schedule: 0 3 \\* \\* \\*/schedule: 0 3 * */"
slip "CronJob time zone typo" 's|timeZone: Europe/Berlin|timeZone: Europe/Berln|'
slip "concurrencyPolicy in lower case" 's/concurrencyPolicy: Forbid/concurrencyPolicy: forbid/'
slip "HPA target quoted" 's/averageUtilization: 70/averageUtilization: "70"/'
slip "PDB with both minAvailable and maxUnavailable" 's/^  maxUnavailable: 1/  maxUnavailable: 1\n  minAvailable: 2/'
slip "NetworkPolicy CIDR /33" 's|cidr: 10.20.0.0/16|cidr: 10.20.0.0/33|'
slip "ConfigMap value on (a YAML boolean)" 's/^  CURRENCY: EUR/  CURRENCY: EUR\n  GIFT_CARDS: on/'
