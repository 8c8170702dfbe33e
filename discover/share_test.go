package discover

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// stubbedCRD is a CRD in a file large enough for its schema to get a
// placeholder.
var stubbedCRD = `apiVersion: apiextensions.k8s.io/v1
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

// TestRestoredSchemasShared: a CRD schema put back after a build is the
// schema as written itself (every build rendering the CRD shares it), and
// positioning the rendered tree leaves it as written, positions included.
func TestRestoredSchemasShared(t *testing.T) {
	crd := stubbedCRD
	s := newSources(nil)
	stubbed := s.prepare("crd.yaml", []byte(crd)).stubbed
	if stubbed == nil {
		t.Fatal("no placeholder: the test CRD is too small")
	}
	want := yamlOf(t, s.schemas[0].tree)
	var trees []*yaml.Node
	for range 2 {
		doc := decodeAll(stubbed)[0].Content[0]
		keep, parts, _, err := s.restore(doc)
		if err != nil || len(keep) != 1 || len(parts) != 1 {
			t.Fatalf("restore: %v, %d schemas", err, len(keep))
		}
		place(s, "kustomization.yaml", "crd.yaml", "crd.yaml", 1, nil, doc, keep)
		fillPositions(doc, keep)
		trees = append(trees, schemaSlots(doc)[0][1])
	}
	if trees[0] != s.schemas[0].tree || trees[1] != s.schemas[0].tree {
		t.Error("a rendered CRD holds a copy of its schema, not the schema as written")
	}
	if got := yamlOf(t, s.schemas[0].tree); got != want {
		t.Errorf("positioning changed the schema as written:\n%s\nwant\n%s", got, want)
	}
}

// yamlOf writes a tree with every node's position.
func yamlOf(t *testing.T, n *yaml.Node) string {
	t.Helper()
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%*s%d:%d %q\n", depth, "", n.Line, n.Column, n.Value)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// TestSchemaReadAgain: a schema a rendered CRD let go of is read again
// from its file (the bytes are not kept), from memory if the file is an
// edited one, and not at all if the file changed since.
func TestSchemaReadAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "crd.yaml")
	if err := os.WriteFile(path, []byte(stubbedCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.yaml")
	s := newSources(map[string][]byte{edited: []byte(stubbedCRD)})
	s.prepare(path, []byte(stubbedCRD))
	s.prepare(edited, []byte(stubbedCRD))
	if len(s.schemas) != 2 {
		t.Fatalf("%d schemas, want 2", len(s.schemas))
	}
	want := yamlOf(t, s.schemas[0].tree)
	for i, sc := range s.schemas {
		n := sc.part(nil).Load()
		if n == nil {
			t.Fatalf("schema %d: not read again", i)
		}
		if got := yamlOf(t, n); got != want {
			t.Errorf("schema %d read again:\n%s\nwant\n%s", i, got, want)
		}
	}
	changed := strings.Replace(stubbedCRD, "type: integer", "type: string", 1)
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := s.schemas[0].part(nil).Load(); n != nil {
		t.Error("a schema whose file changed was read again from the changed file")
	}
	if n := s.schemas[1].part(nil).Load(); n == nil {
		t.Error("the edited file's schema was not read again from memory")
	}
}

// renderMemo is the content cache in memory.
type renderMemo map[[32]byte][]byte

func (m renderMemo) Get(key [32]byte) []byte    { return m[key] }
func (m renderMemo) Put(key [32]byte, d []byte) { m[key] = d }

// TestRestoredSchemasDetach: a CRD restored from the render cache lets go
// of its schema and reads it again from its file, as the build's own
// does, the same tree with the same positions.
func TestRestoredSchemasDetach(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(stubbedCRD), 0o644)
	os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [crd.yaml]\n"), 0o644)
	t.Chdir(dir)
	cache := renderMemo{}
	crd := func() *manifest.Object {
		rendered, cold := 0, len(cache) == 0
		res := Discover([]string{"."}, Options{Cache: cache, Rendered: func(string, string) { rendered++ }})
		if len(res.Units) != 1 || len(res.Units[0].Source.Objects) != 1 {
			t.Fatalf("units %v", res.Units)
		}
		if rendered != map[bool]int{true: 1, false: 0}[cold] {
			t.Fatalf("rendered %d units (cache empty: %v)", rendered, cold)
		}
		return res.Units[0].Source.Objects[0]
	}
	cold, warm := crd(), crd()
	want := yamlOf(t, cold.Node())
	if _, err := warm.Content(); err != nil {
		t.Fatal(err)
	}
	slot := schemaSlots(warm.Node())[0]
	warm.ReleaseDetachable()
	if len(slot[1].Content) != 0 {
		t.Fatal("the restored CRD did not let go of its schema")
	}
	if got := yamlOf(t, warm.Node()); got != want {
		t.Errorf("the restored CRD read again:\n%.2000s\nwant\n%.2000s", got, want)
	}
	if manifest.TreeSum(warm.Node()) != manifest.TreeSum(cold.Node()) {
		t.Error("the restored CRD's tree differs")
	}
}
