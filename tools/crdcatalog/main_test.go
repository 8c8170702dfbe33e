package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gizmos is a module's CRD file: two CRDs (one of another group) and a
// Deployment, which is not kept.
const gizmos = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  names: {kind: Gizmo, plural: gizmos, singular: gizmo, listKind: GizmoList}
  scope: Cluster
  versions:
  - name: v1beta1
    served: false
    storage: false
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, description: the spec, properties: {mode: {type: string, enum: [a, b]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: controller}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.other.example.com}
spec:
  group: other.example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`

// moduleZip writes a module zip as the module cache holds one.
func moduleZip(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "v1.0.0.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{
		"example.com/gizmo@v1.0.0/config/crds/gizmos.yaml": gizmos,
		"example.com/gizmo@v1.0.0/README.md":               "not a CRD",
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

var testSources = []source{
	{Project: "gizmo", Version: "v1.0.0", Module: "example.com/gizmo", ModuleVersion: "v1.0.0", Paths: []string{"config/crds/*.yaml"}, Groups: []string{"example.com"}},
	{Project: "gizmo", Version: "v0.9.0", Module: "example.com/gizmo", ModuleVersion: "v1.0.0", Paths: []string{"config/crds/*.yaml"}},
	{Project: "widget", Version: "abc123", Local: "realworld/widgets", Repo: "github.com/example/widgets", Paths: []string{"*.yaml"},
		Template: map[string]bool{".Values.crds.create": true, ".Values.webhook": false}},
}

// TestReproducible: building the catalog twice gives the same bytes, file
// for file, and writing them twice too.
func TestReproducible(t *testing.T) {
	zp := moduleZip(t)
	zipOf := func(module, version string) (string, error) { return zp, nil }
	gone := []missing{{Project: "nothing", Groups: []string{"none.example.com"}, Why: "no source"}}
	first, err := build(testSources, gone, zipOf, "testdata/shared")
	if err != nil {
		t.Fatal(err)
	}
	second, err := build(testSources, gone, zipOf, "testdata/shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(second) {
		t.Fatalf("%d files, then %d", len(first), len(second))
	}
	for name, b := range first {
		if !bytes.Equal(b, second[name]) {
			t.Errorf("%s differs between two builds", name)
		}
	}
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		if err := write(d, first); err != nil {
			t.Fatal(err)
		}
	}
	for name := range first {
		a, _ := os.ReadFile(filepath.Join(dirs[0], name))
		b, _ := os.ReadFile(filepath.Join(dirs[1], name))
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s written differently", name)
		}
	}
	for _, want := range []string{"data/index.json", "groups_gen.go", "data/example.com/gizmo@v1.0.0.json.gz",
		"data/example.com/gizmo@v0.9.0.json.gz", "data/other.example.com/gizmo@v0.9.0.json.gz", "data/example.com/widget@abc123.json.gz"} {
		if first[want] == nil {
			t.Errorf("no %s", want)
		}
	}
	if first["data/other.example.com/gizmo@v1.0.0.json.gz"] != nil {
		t.Errorf("the v1.0.0 source keeps only example.com")
	}
	idx := string(first["data/index.json"])
	for _, want := range []string{`"default": true`, `"versions": [` + "\n" + `      "v1"` + "\n", `"why": "no source"`,
		`github.com/example/widgets@abc123 *.yaml (copy in ../shared/realworld/widgets) rendered with .Values.crds.create=true, .Values.webhook=false`} {
		if !strings.Contains(idx, want) {
			t.Errorf("index lacks %q:\n%s", want, idx)
		}
	}
}

// TestClean: descriptions go from schemas, not properties named
// description; what the server judges stays; the template's false branch
// and value-filled annotation are gone.
func TestClean(t *testing.T) {
	data, err := os.ReadFile("testdata/shared/realworld/widgets/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y, err := untemplate(data, map[string]bool{".Values.crds.create": true, ".Values.webhook": false})
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crdsOf([][]byte{y}, nil)
	if err != nil || len(crds) != 1 {
		t.Fatalf("%d CRDs, %v", len(crds), err)
	}
	spec := crds[0]["spec"].(map[string]any)
	if spec["conversion"] != nil {
		t.Errorf("the webhook branch was kept")
	}
	if md := crds[0]["metadata"].(map[string]any); md["annotations"] != nil && len(md["annotations"].(map[string]any)) > 0 || md["creationTimestamp"] != nil {
		t.Errorf("metadata = %v", md)
	}
	root := spec["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	if root["description"] != nil {
		t.Errorf("the root's description was kept")
	}
	s := root["properties"].(map[string]any)["spec"].(map[string]any)
	props := s["properties"].(map[string]any)
	if d, ok := props["description"].(map[string]any); !ok || d["type"] != "string" || d["description"] != nil {
		t.Errorf("the property named description = %v", props["description"])
	}
	if size := props["size"].(map[string]any); size["maximum"] == nil || size["default"] == nil {
		t.Errorf("size lost what the server judges by: %v", size)
	}
	if s["x-kubernetes-validations"] == nil {
		t.Errorf("the CEL rule was dropped")
	}
}

func TestUntemplate(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"a: 1\n{{- if .X }}\nb: 2\n{{- end }}\nc: 3\n", "a: 1\nc: 3\n", ""},
		{"{{- if .X }}\n{{- if .Y }}\nb: 2\n{{- end }}\n{{- end }}\n", "", ""},
		{"{{- if .Y }}\nb: 2\n{{- end }}\n", "b: 2\n", ""},
		{"{{- if .Z }}\nb: 2\n{{- end }}\n", "", `no condition given for ".Z"`},
		{"a: {{ .Values.a }}\n", "", ""},
		{"- {{ .Values.a }}\n", "", "a template action kiln does not evaluate"},
		{"{{- if .Y }}\nb: 2\n", "", "1 template actions not ended"},
	}
	for _, tc := range cases {
		got, err := untemplate([]byte(tc.in), map[string]bool{".X": false, ".Y": true})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("untemplate(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("untemplate(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzUntemplate: any text either fails or gives text without a template
// action, and reading that again changes nothing.
func FuzzUntemplate(f *testing.F) {
	f.Add([]byte("a: 1\n{{- if .X }}\nb: 2\n{{- end }}\n"))
	f.Add([]byte("{{- with .Y }}\n  k: {{ .v }}\n{{- end }}\n"))
	f.Add([]byte("{{ if .caBundle }}{{ cat \"caBundle:\" .caBundle | indent 8 }}{{ end }}\n"))
	conds := map[string]bool{".X": false, ".Y": true}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := untemplate(data, conds)
		if err != nil {
			return
		}
		if bytes.Contains(out, []byte("{{")) {
			t.Fatalf("a template action left in %q", out)
		}
		again, err := untemplate(out, conds)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("untemplate twice: %q, %v; once: %q", again, err, out)
		}
	})
}
