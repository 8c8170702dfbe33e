// Package duplicate holds object/duplicate: the same object (API group,
// kind, namespace and name) defined twice in one rendered unit. kubectl
// apply applies both copies in turn and the last one read wins, silently;
// a GitOps controller reports the resource as defined twice or flaps
// between the copies.
package duplicate

import (
	"fmt"
	"reflect"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Duplicate is the rule ID.
const Duplicate = "object/duplicate"

// Checker reports object/duplicate.
var Checker = &rules.Checker{Name: "duplicate", Rules: ruleList, Run: run}

func init() { rules.Register(Checker) }

// named reports whether the object has metadata.name (objects with only
// generateName get a new name on every create and are never duplicates).
func named(o *manifest.Object) bool {
	content, err := o.Content()
	if err != nil || content == nil {
		return false
	}
	md, _ := content["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	return name != ""
}

func run(p *rules.Pass) error {
	first := map[manifest.Identity]*manifest.Object{}
	for _, o := range p.Objects {
		if o.Name == "" || !named(o) {
			continue
		}
		k := manifest.IdentityOf(o)
		prev := first[k]
		if prev == nil {
			first[k] = o
			continue
		}
		same := "they differ, so the result depends on the order files are applied"
		a, _ := prev.Content()
		b, _ := o.Content()
		if reflect.DeepEqual(a, b) {
			same = "the copies are identical"
		}
		ns := ""
		if o.Namespace != "" {
			ns = fmt.Sprintf(" in namespace %q", o.Namespace)
		}
		p.Report(rules.Diagnostic{Rule: Duplicate, Object: o, Field: "metadata.name", Message: fmt.Sprintf(
			"%s %q%s is defined twice: here and at %s (%s); kubectl apply applies both and the last one wins without a word, a GitOps controller reports a conflict; keep one definition, or put the copies in separate directories (one per environment)",
			o.Kind, o.Name, ns, prev.Pos(), same)})
	}
	return nil
}

var ruleList = []*rules.Rule{{
	ID:       Duplicate,
	Severity: rules.Warning,
	Summary:  "the same object (group, kind, namespace, name) is defined twice in one directory or rendered unit",
	Doc: `Two definitions of one object (same API group, kind, namespace and name) in
the files of one directory, chart or kustomization: kubectl apply -f DIR
applies both in turn and the last one read wins without a word, so an edit to
the first copy never reaches the cluster; Argo CD and Flux report the
resource as defined twice. The finding is at the second copy and names the
first. apps/v1 and extensions/v1beta1 are one group's versions of the same
object and count as one; objects with only generateName are never
duplicates.

kiln relates objects within one rendered unit: a chart, a kustomization, or
(for plain manifests) the files of one directory. Copies in different
directories (one per environment, an example next to the real thing) are
separate units and are not reported.

Fix: keep one definition; if both are needed for different environments,
put them in separate directories or overlays.`,
	Fail: `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {LOG_LEVEL: debug}
`,
	Pass: `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop-staging}
data: {LOG_LEVEL: debug}
`,
}}
