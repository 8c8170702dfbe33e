package discover

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// plainBuild is `kustomize build dir` with nothing of kiln's in between.
func plainBuild(t *testing.T, dir string) []string {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []string
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(y))
	}
	return out
}

// kilnBuild is the same build as discovery runs it.
func kilnBuild(t *testing.T, dir string) []string {
	t.Helper()
	b := buildKustomization(dir, &buildShared{sources: newSources(nil)})
	if len(b.source.Errs) > 0 || b.remote != "" || b.plugin != "" {
		t.Fatalf("build %s: %v %s %s", dir, b.source.Errs, b.remote, b.plugin)
	}
	var out []string
	for _, o := range b.source.Objects {
		y, err := yaml.Marshal(o.Node())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(y))
	}
	return out
}

// canonical is an object's YAML as sorted JSON: the same for the same
// values whatever the key order.
func canonical(t *testing.T, y string) string {
	t.Helper()
	j, err := sigsyaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatal(err)
	}
	// An empty annotations mapping is the one difference kiln allows:
	// kustomize keeps it on some paths and drops it on others, and kiln
	// always drops it; the server reads {} and none alike.
	if meta, ok := v["metadata"].(map[string]any); ok {
		if a, ok := meta["annotations"].(map[string]any); ok && len(a) == 0 {
			delete(meta, "annotations")
		}
	}
	out, _ := json.MarshalIndent(v, "", " ")
	return string(out)
}

func sameBuilds(t *testing.T, dir string) {
	t.Helper()
	want, got := plainBuild(t, dir), kilnBuild(t, dir)
	if len(want) != len(got) {
		t.Fatalf("%s: %d objects, kustomize gives %d", dir, len(got), len(want))
	}
	for i := range want {
		if w, g := canonical(t, want[i]), canonical(t, got[i]); w != g {
			t.Errorf("%s: object %d differs from kustomize's:\n--- kustomize\n%s\n--- kiln\n%s", dir, i, w, g)
		}
	}
}

// bigCRD returns a CRD whose schema is larger than stubMinSize, and a List.
func bigCRD() string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
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
          spec:
            type: object
            properties:
` + fields("                ") + `---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed}
  data: {a: b}
`
}

// legacyCRD returns an apiextensions v1beta1 CRD, whose schema is under
// spec.validation (a mapping a strategic-merge patch merges into).
func legacyCRD() string {
	return `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  version: v1
  validation:
    openAPIV3Schema:
      type: object
      properties:
` + fields("        ")
}

func fields(indent string) string {
	var b strings.Builder
	for i := 0; i < 1500; i++ {
		fmt.Fprintf(&b, "%sfield%d:\n%s  type: string\n%s  description: field number %d of the widget\n", indent, i, indent, indent, i)
	}
	return b.String()
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildIsKustomizes: whatever kiln does while kustomize reads the files
// (origin annotations, schema placeholders), the objects are those
// `kustomize build` gives, including when a patch goes into a schema (the
// build is then done again without placeholders).
func TestBuildIsKustomizes(t *testing.T) {
	base := map[string]string{
		"base/kustomization.yaml": "resources: [crd.yaml, legacy.yaml, deploy.yaml]\n",
		"base/crd.yaml":           bigCRD(),
		"base/legacy.yaml":        legacyCRD(),
		"base/deploy.yaml":        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  annotations: {}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: a:1}]\n",
	}
	overlays := map[string]string{
		"plain":          "resources: [../base]\nnamespace: prod\nnamePrefix: p-\ncommonAnnotations: {team: x}\n",
		"smp-validation": "resources: [../base]\npatches:\n- patch: |\n    apiVersion: apiextensions.k8s.io/v1beta1\n    kind: CustomResourceDefinition\n    metadata: {name: gadgets.example.com}\n    spec:\n      validation:\n        openAPIV3Schema:\n          x-kubernetes-preserve-unknown-fields: true\n",
		"smp":            "resources: [../base]\npatches:\n- patch: |\n    apiVersion: apiextensions.k8s.io/v1\n    kind: CustomResourceDefinition\n    metadata: {name: widgets.example.com}\n    spec:\n      versions:\n      - name: v1\n        schema:\n          openAPIV3Schema:\n            x-kubernetes-preserve-unknown-fields: true\n",
		"json6902":       "resources: [../base]\npatches:\n- target: {kind: CustomResourceDefinition, name: widgets.example.com}\n  patch: |\n    - op: add\n      path: /spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/field7/maxLength\n      value: 3\n",
		"generated":      "resources: [../base]\nconfigMapGenerator:\n- name: settings\n  literals: [a=b]\n",
	}
	files := map[string]string{}
	for k, v := range base {
		files[k] = v
	}
	for name, k := range overlays {
		files[name+"/kustomization.yaml"] = k
	}
	root := writeTree(t, files)
	// The patches into a schema need the second build. The one into a v1
	// CRD's versions replaces the list (it has no merge key), placeholder
	// and all, so its first build stands.
	again := map[string]bool{"smp-validation": true, "json6902": true}
	for name := range overlays {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			sameBuilds(t, dir)
			b := &kustBuild{dir: dir, file: kustomizationFile(dir), read: map[string]bool{}}
			_, _, err := runKustomize(b, scanTree(dir), &buildShared{sources: newSources(nil)}, true)
			if (err != nil) != again[name] {
				t.Errorf("build with placeholders: err = %v, want an error: %v", err, again[name])
			}
		})
	}
}

// TestBuildIsKustomizesRealworld compares the builds of the shared
// projects' topmost kustomizations with kustomize's own.
func TestBuildIsKustomizesRealworld(t *testing.T) {
	dirs := []string{
		"argo-cd/manifests/cluster-install", "argo-cd/manifests/ha/namespace-install", "argo-cd/manifests/core-install",
		"jobset/config/default", "metrics-server/manifests/overlays/release",
	}
	for _, d := range dirs {
		dir := filepath.Join("..", "..", "shared", "realworld", d)
		if _, err := os.Stat(dir); err != nil {
			t.Logf("%s: not here", d)
			continue
		}
		t.Run(d, func(t *testing.T) { sameBuilds(t, dir) })
	}
}

// TestOriginPositions: each rendered object points at its own document,
// a List item at itself, a generated one at its generator.
func TestOriginPositions(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml": "resources: [crd.yaml]\n",
		"base/crd.yaml":           bigCRD(),
		"kustomization.yaml":      "resources: [base, two.yaml]\nconfigMapGenerator:\n- name: settings\n  literals: [a=b]\n",
		"two.yaml":                "apiVersion: v1\nkind: Service\nmetadata: {name: same}\n---\n# a comment\napiVersion: v1\nkind: Service\nmetadata: {name: same, namespace: other}\n",
	})
	b := buildKustomization(root, &buildShared{sources: newSources(nil)})
	if len(b.source.Errs) > 0 {
		t.Fatal(b.source.Errs)
	}
	got := map[string]string{}
	for _, o := range b.source.Objects {
		rel, _ := filepath.Rel(root, o.Pos().File)
		got[o.Kind+"/"+o.Namespace+"/"+o.Name] = fmt.Sprintf("%s:%d", filepath.ToSlash(rel), o.Pos().Line)
		if _, ok := o.Annotations[originKey]; ok {
			t.Errorf("%s keeps the origin annotation", o.Name)
		}
	}
	want := map[string]string{
		"CustomResourceDefinition//widgets.example.com": "base/crd.yaml:1",
		"ConfigMap//listed":                             "base/crd.yaml:" + fmt.Sprint(strings.Count(bigCRD()[:strings.Index(bigCRD(), "- apiVersion: v1\n  kind: ConfigMap")], "\n")+1),
		"Service//same":                                 "two.yaml:1",
		"Service/other/same":                            "two.yaml:6",
		"ConfigMap//settings-" + settingsHash(b):        "kustomization.yaml:2",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s at %s, want %s (all: %v)", k, got[k], w, got)
		}
	}
}

func settingsHash(b *kustBuild) string {
	for _, o := range b.source.Objects {
		if strings.HasPrefix(o.Name, "settings-") {
			return strings.TrimPrefix(o.Name, "settings-")
		}
	}
	return "?"
}

// TestComponents: a kustomize Component is built only where a
// kustomization includes it; one nobody includes is skipped, not a unit.
func TestComponents(t *testing.T) {
	comp := "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels: {team: x}\n"
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml":   "resources: [cm.yaml]\ncomponents: [../used]\n",
		"app/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"used/kustomization.yaml":  comp,
		"alone/kustomization.yaml": comp,
	})
	res := Discover([]string{root}, Options{})
	var units []string
	for _, u := range res.Units {
		rel, _ := filepath.Rel(root, u.Dir)
		units = append(units, filepath.ToSlash(rel))
		for _, o := range u.Source.Objects {
			if o.Labels["team"] != "x" {
				t.Errorf("%s: the component's label is missing", o.Name)
			}
		}
	}
	if strings.Join(units, ",") != "app" {
		t.Errorf("units = %v, want only app", units)
	}
	var skipped []string
	for _, s := range res.Skipped {
		rel, _ := filepath.Rel(root, s.Pos.File)
		skipped = append(skipped, filepath.ToSlash(rel)+": "+s.Reason)
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "alone/kustomization.yaml: kustomize Component that no kustomization") {
		t.Errorf("skipped = %v, want the lone component", skipped)
	}
}

// TestSchemaPositions: a rendered CRD's schema points into the file as
// written, whether the build read a placeholder (the schema is put back)
// or fell back to the file itself (a patch went into the schema); the
// rendered objects take their positions from the documents the builds
// read, placeholders standing for their schemas.
func TestSchemaPositions(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml":     "resources: [crd.yaml]\n",
		"base/crd.yaml":               bigCRD(),
		"plain/kustomization.yaml":    "resources: [../base]\ncommonAnnotations: {team: x}\n",
		"json6902/kustomization.yaml": "resources: [../base]\npatches:\n- target: {kind: CustomResourceDefinition, name: widgets.example.com}\n  patch: |\n    - op: add\n      path: /spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/field7/maxLength\n      value: 3\n",
	})
	lines := strings.Split(bigCRD(), "\n")
	lineOf := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		t.Fatalf("no line %q", prefix)
		return 0
	}
	want := map[string]int{
		"spec.versions[0].schema.openAPIV3Schema":                                   lineOf("      openAPIV3Schema:"),
		"spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.field7": lineOf("                field7:"),
		"spec.names.plural": lineOf("  names:"),
	}
	for _, overlay := range []string{"plain", "json6902"} {
		t.Run(overlay, func(t *testing.T) {
			b := buildKustomization(filepath.Join(root, overlay), &buildShared{sources: newSources(nil)})
			if len(b.source.Errs) > 0 || len(b.source.Objects) == 0 {
				t.Fatalf("build: %v", b.source.Errs)
			}
			crd := b.source.Objects[0]
			if crd.Kind != "CustomResourceDefinition" {
				t.Fatalf("first object is a %s", crd.Kind)
			}
			for field, line := range want {
				if got := crd.Locate(field); got.Line != line || filepath.Base(got.File) != "crd.yaml" {
					t.Errorf("%s at %s:%d, want crd.yaml:%d", field, got.File, got.Line, line)
				}
			}
		})
	}
}
