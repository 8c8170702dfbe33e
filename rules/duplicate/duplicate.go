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
	type dup struct{ first, again *manifest.Object }
	first := map[manifest.Identity]*manifest.Object{}
	var dups []dup
	perPair := map[[2]string]int{}
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
		dups = append(dups, dup{prev, o})
		if prev.File != o.File {
			perPair[[2]string{prev.File, o.File}]++
		}
	}
	reported := map[[2]string]bool{}
	for _, d := range dups {
		pair := [2]string{d.first.File, d.again.File}
		if n := perPair[pair]; n > 1 {
			// One file repeating many objects of another: alternative
			// bundles (install.yaml, namespace-install.yaml) more often
			// than a mistake. One finding per pair of files.
			if reported[pair] {
				continue
			}
			reported[pair] = true
			p.Report(rules.Diagnostic{Rule: Duplicate, Object: d.again, Field: "metadata.name", Message: fmt.Sprintf(
				"this file defines %d objects that %s also defines, %s %q first (at %s): kubectl apply -f on the directory applies both and the last one wins without a word; if the files are alternatives applied one at a time, put them in separate directories (or exclude one in .kiln.yaml), else keep one definition",
				n, d.first.File, d.again.Kind, d.again.Name, d.first.Pos())})
			continue
		}
		same := "they differ, so the result depends on the order files are applied"
		a, _ := d.first.Content()
		b, _ := d.again.Content()
		if reflect.DeepEqual(a, b) {
			same = "the copies are identical"
		}
		ns := ""
		if d.again.Namespace != "" {
			ns = fmt.Sprintf(" in namespace %q", d.again.Namespace)
		}
		p.Report(rules.Diagnostic{Rule: Duplicate, Object: d.again, Field: "metadata.name", Message: fmt.Sprintf(
			"%s %q%s is defined twice: here and at %s (%s); kubectl apply applies both and the last one wins without a word, a GitOps controller reports a conflict; keep one definition, or put the copies in separate directories (one per environment)",
			d.again.Kind, d.again.Name, ns, d.first.Pos(), same)})
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
first. When one file repeats several objects of another (alternative
bundles such as install.yaml and namespace-install.yaml), one finding at the
first repeated object stands for the pair of files. apps/v1 and
apps/v1beta2 are one group's versions of the same
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
