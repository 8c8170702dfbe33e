package sidecar

import (
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// PolicyFixes are the repairs kiln fix makes for the findings of the
// sidecar rules written as policies, by rule ID; rules/policies attaches
// them to the findings.
var PolicyFixes = map[string]rules.Fixer{
	ClassicInJob: nativeSidecarFix,
}

// nativeSidecarMinor: native sidecars need Kubernetes 1.29 (SidecarContainers beta, on by default).
const nativeSidecarMinor = 29

// nativeSidecarFix moves the helper at <template spec>.containers[i] to a
// native sidecar, on targets that have them.
func nativeSidecarFix(o *manifest.Object, field string, kube manifest.KubeVersion) *rules.Fix {
	if kube.Less(manifest.KubeVersion{Major: 1, Minor: nativeSidecarMinor}) {
		return nil
	}
	for _, t := range manifest.PodTemplatesOf(o) {
		rest, ok := strings.CutPrefix(field, t.SpecPath()+".containers[")
		if !ok || !strings.HasSuffix(rest, "]") {
			continue
		}
		if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil {
			return &rules.Fix{Action: rules.FixNativeSidecar, Template: t.Path, Container: i}
		}
	}
	return nil
}
