package discover

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestRestoredSchemasShared: a CRD schema put back after a build is the
// schema as written, shared, when the build's positioning left the copy
// identical to it, and stays the build's own copy when anything differs.
func TestRestoredSchemasShared(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: ` + strings.Repeat("x", stubMinSize) + `
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`
	for _, c := range []struct {
		name   string
		edit   func(schema *yaml.Node) // what the build's positioning did to the copy
		shared bool
	}{
		{"left as written", func(*yaml.Node) {}, true},
		{"a node moved", func(s *yaml.Node) { s.Content[len(s.Content)-1].Line++ }, false},
		{"a value changed", func(s *yaml.Node) { s.Content[1].Value = "array" }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSources()
			stubbed := s.prepare("crd.yaml", []byte(crd)).stubbed
			if stubbed == nil {
				t.Fatal("no placeholder: the test CRD is too small")
			}
			docs := decodeAll(stubbed)
			rs, err := s.restore(docs[0].Content[0])
			if err != nil || len(rs) != 1 {
				t.Fatalf("restore: %v, %d schemas", err, len(rs))
			}
			if rs[0].slot[1] == rs[0].orig {
				t.Fatal("restore put back the schema itself, not a copy")
			}
			c.edit(rs[0].slot[1])
			share(rs)
			if got := rs[0].slot[1] == rs[0].orig; got != c.shared {
				t.Errorf("shared = %v, want %v", got, c.shared)
			}
		})
	}
}
