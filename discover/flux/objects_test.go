package flux

import "testing"

// FuzzReadObjects: any bytes read as a manifest file give objects with an
// apiVersion and a kind, and never panic.
func FuzzReadObjects(f *testing.F) {
	f.Add([]byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: a, namespace: b}\nspec: {path: ./x}\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n- 3\n"))
	f.Add([]byte("---\n- a\n---\nkind: X\n---\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range readObjects("f.yaml", data) {
			if o.apiVersion() == "" || o.kind() == "" {
				t.Fatalf("object without apiVersion or kind: %v", o.content)
			}
			_ = o.name() + o.namespace() + o.group()
			spec, _ := o.content["spec"].(map[string]any)
			_ = sourceOf(spec, o.namespace())
		}
	})
}
