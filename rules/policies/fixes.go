package policies

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/sidecar"
)

// fixers attach kiln fix's repair to the findings of the policies whose
// rule it can repair: from the object, the finding's field (the policy's
// field-message path) and the target; nil when this finding has none.
var fixers = map[string]func(o *manifest.Object, field string, kube manifest.KubeVersion) *rules.Fix{
	sidecar.ClassicInJob: nativeSidecarFix,
}

// FixableRules lists the rules of the policies whose findings carry a fix, sorted.
func FixableRules() []string {
	out := make([]string, 0, len(fixers))
	for id := range fixers {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
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
