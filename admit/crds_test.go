package admit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	sigyaml "sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite generated files")

// TestShippedCRDs: the embedded JSON is the CRD YAML from upstream as
// kubectl would send it, without descriptions (validation does not read
// them, and they are most of its size). -update regenerates it.
func TestShippedCRDs(t *testing.T) {
	y, err := os.ReadFile("crds/jobset.x-k8s.io_jobsets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := sigyaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(stripDescriptions(v))
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile("crds/jobset.x-k8s.io_jobsets.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(want, jobSetCRD) {
		t.Fatal("crds/jobset.x-k8s.io_jobsets.json is stale: run go test ./admit -run TestShippedCRDs -update")
	}
}

func stripDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "description" {
				if _, ok := e.(string); ok {
					delete(x, k)
					continue
				}
			}
			x[k] = stripDescriptions(e)
		}
	case []any:
		for i := range x {
			x[i] = stripDescriptions(x[i])
		}
	}
	return v
}

// TestWithoutDocs: every schema a CRD's schema holds loses its
// documentation, and nothing else.
func TestWithoutDocs(t *testing.T) {
	doc := func(p apiextensions.JSONSchemaProps) apiextensions.JSONSchemaProps {
		var example apiextensions.JSON = "an example"
		p.Description, p.Title, p.Example = "documented", "a title", &example
		p.ExternalDocs = &apiextensions.ExternalDocumentation{URL: "https://example.com"}
		return p
	}
	leaf := doc(apiextensions.JSONSchemaProps{Type: "string", Pattern: "^a"})
	root := doc(apiextensions.JSONSchemaProps{
		Type:                 "object",
		Properties:           map[string]apiextensions.JSONSchemaProps{"description": leaf},
		PatternProperties:    map[string]apiextensions.JSONSchemaProps{"^x": leaf},
		Definitions:          map[string]apiextensions.JSONSchemaProps{"d": leaf},
		Items:                &apiextensions.JSONSchemaPropsOrArray{Schema: ptr(leaf), JSONSchemas: []apiextensions.JSONSchemaProps{leaf}},
		AllOf:                []apiextensions.JSONSchemaProps{leaf},
		OneOf:                []apiextensions.JSONSchemaProps{leaf},
		AnyOf:                []apiextensions.JSONSchemaProps{leaf},
		Not:                  ptr(leaf),
		AdditionalProperties: &apiextensions.JSONSchemaPropsOrBool{Schema: ptr(leaf)},
		AdditionalItems:      &apiextensions.JSONSchemaPropsOrBool{Schema: ptr(leaf)},
		Dependencies:         apiextensions.JSONSchemaDependencies{"a": {Schema: ptr(leaf)}},
	})
	before, _ := json.Marshal(root)
	withoutDocs(&root)
	after, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"documented", "a title", "an example", "example.com"} {
		if n := bytes.Count(before, []byte(s)); n != 13 {
			t.Fatalf("the fixture has %q %d times, want 13", s, n)
		}
		if bytes.Contains(after, []byte(s)) {
			t.Errorf("%q is left: %s", s, after)
		}
	}
	if n := bytes.Count(after, []byte(`"^a"`)); n != 12 {
		t.Errorf("the leaves' patterns: %d left, want 12", n)
	}
	if !bytes.Contains(after, []byte(`"description":{`)) {
		t.Errorf("a property named description was removed: %s", after)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCRDFieldsAsWritten: the server names a schema error in a v1 CRD whose
// versions share one schema by its internal, hoisted field
// (spec.validation...); the message keeps the server's words, the field
// locates it in the first version's schema, where it is written.
func TestCRDFieldsAsWritten(t *testing.T) {
	const crd = `apiVersion: apiextensions.k8s.io/v1
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
        properties:
          size: {type: bogus}
`
	o, r := admitOne(t, manifest.KubeVersion{Major: 1, Minor: 37}, crd)
	var got []Problem
	for _, p := range r.Problems {
		if strings.Contains(p.Message, "bogus") {
			got = append(got, p)
		}
	}
	if len(got) != 1 {
		t.Fatalf("problems %v, want one on the bogus type", r.Problems)
	}
	p := got[0]
	if !strings.HasPrefix(p.Message, "spec.validation.openAPIV3Schema.properties[size].type: Unsupported value") {
		t.Errorf("message %q: not the server's", p.Message)
	}
	if want := "spec.versions[0].schema.openAPIV3Schema.properties[size].type"; p.Field != want {
		t.Errorf("field %q, want %q", p.Field, want)
	}
	if pos := o.Locate(p.Field); pos.Line != 16 {
		t.Errorf("located at line %d, want 16", pos.Line)
	}
}
