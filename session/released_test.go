package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/rules"
)

// TestFindingInsideReleasedSchema: a large CRD rendered by kustomize lets
// go of its schema once the context has served (manifest.Detachable); a
// finding inside the schema still points at its line in the file, with the
// content cache and without.
func TestFindingInsideReleasedSchema(t *testing.T) {
	var b strings.Builder
	b.WriteString(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
`)
	for i := range 1200 {
		fmt.Fprintf(&b, "              field%d:\n                type: string\n                description: field number %d of the widget, documented at length\n", i, i)
	}
	b.WriteString("              broken:\n                type: bogus\n")
	crd := b.String()
	if len(crd) < 64<<10 {
		t.Fatalf("the CRD is %d bytes: too small to get placeholders", len(crd))
	}
	line := strings.Count(crd[:strings.Index(crd, "type: bogus")], "\n") + 1
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"base/kustomization.yaml":    "resources: [crd.yaml]\n",
		"base/crd.yaml":              crd,
		"overlay/kustomization.yaml": "resources: [../base]\ncommonAnnotations: {team: x}\n",
	})
	t.Chdir(root)
	for _, flags := range []map[string]string{{"no-cache": "true"}, {"cache-dir": t.TempDir()}} {
		r := mustLint(t, []string{"overlay"}, flags)
		var at []string
		r.out.Result.Each(func(f rules.Finding) error {
			if strings.Contains(f.Message, "bogus") {
				at = append(at, fmt.Sprintf("%s:%d", f.Pos.File, f.Pos.Line))
			}
			return nil
		})
		if want := fmt.Sprintf("base/crd.yaml:%d", line); len(at) != 1 || at[0] != want {
			t.Errorf("%v: the finding on the bogus type is at %v, want %s", flags, at, want)
		}
	}
}
