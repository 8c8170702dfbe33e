package manifest

import (
	"reflect"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func renderedCRD(t *testing.T, unit, text string) *Object {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	o, err := NewRenderedObject("crds/widget.yaml", unit, 0, doc.Content[0])
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestCopiesShareDecodedCRDs: the copies of one rendered CRD (same source,
// same tree) in several units share one decoded content; a CRD that
// differs, or one whose content was replaced, has its own.
func TestCopiesShareDecodedCRDs(t *testing.T) {
	const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n"
	a, b := renderedCRD(t, "overlays/dev", crd), renderedCRD(t, "overlays/prod", crd)
	other := renderedCRD(t, "overlays/test", crd+"  scope: Namespaced\n")
	ca, _ := a.Content()
	cb, _ := b.Content()
	co, _ := other.Content()
	if reflect.ValueOf(ca).UnsafePointer() != reflect.ValueOf(cb).UnsafePointer() {
		t.Error("two copies of one CRD decoded twice")
	}
	if reflect.ValueOf(ca).UnsafePointer() == reflect.ValueOf(co).UnsafePointer() {
		t.Error("a different CRD got a copy's content")
	}
	if co["spec"].(map[string]any)["scope"] != "Namespaced" || ca["spec"].(map[string]any)["scope"] != nil {
		t.Errorf("contents mixed up: %v / %v", ca["spec"], co["spec"])
	}
	b.SetContent(map[string]any{"replaced": true})
	if c, _ := a.Content(); c["replaced"] != nil {
		t.Error("replacing one copy's content changed the other's")
	}
	a.DropContent()
	fresh := renderedCRD(t, "overlays/stage", crd)
	if c, err := fresh.Content(); err != nil || c["metadata"].(map[string]any)["name"] != "widgets.example.com" {
		t.Errorf("a copy decoded after the others let go: %v, %v", c, err)
	}
}
