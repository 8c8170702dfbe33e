package policytest

import (
	"fmt"

	"github.com/kilnhq/kiln/admit/servedversions"
	"github.com/kilnhq/kiln/manifest"
)

// versionNote says which Kubernetes versions serve a policy's or binding's
// API version (kiln's served-versions table, generated from the API
// server's code), and whether the target kube does.
func versionNote(o *manifest.Object, kube manifest.KubeVersion) string {
	e, ok := servedversions.Lookup(o.Group(), o.Version(), o.Kind)
	if !ok || e.Exists.Empty() {
		return fmt.Sprintf("%s %q is %s, a version kiln's table of served versions does not list", o.Kind, o.Name, o.APIVersion)
	}
	span := func(s servedversions.Span) string {
		if s.To >= manifest.LatestKube.Minor {
			return fmt.Sprintf("Kubernetes 1.%d and later", s.From)
		}
		return fmt.Sprintf("Kubernetes 1.%d to 1.%d", s.From, s.To)
	}
	how := "served by " + span(e.Served) + " (on by default)"
	if e.Served.Empty() {
		how = "served by " + span(e.Exists) + " only when the cluster enables it (--runtime-config=" + o.APIVersion + "=true)"
	}
	at := fmt.Sprintf("%s serves it", kube)
	switch {
	case !e.Exists.Has(kube):
		at = fmt.Sprintf("%s does not serve it", kube)
	case !e.Served.Has(kube):
		at = fmt.Sprintf("%s serves it only when enabled", kube)
	}
	return fmt.Sprintf("%s %q is %s: %s; %s", o.Kind, o.Name, o.APIVersion, how, at)
}
