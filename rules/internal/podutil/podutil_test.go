package podutil

import (
	"reflect"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
)

func TestAt(t *testing.T) {
	content := map[string]any{
		"spec": map[string]any{
			"list":   []any{map[string]any{"a": "x"}, int64(3)},
			"labels": map[string]any{"app.kubernetes.io/name": "web"},
		},
	}
	for _, tc := range []struct {
		path string
		want any
	}{
		{"spec.list[0].a", "x"},
		{"spec.list[1]", int64(3)},
		{"spec.list[2]", nil},
		{"spec.list[-1]", nil},
		{"spec.list.a", nil},
		{`spec.labels["app.kubernetes.io/name"]`, "web"},
		{"spec.list[1].deeper", nil},
		{"missing.path", nil},
	} {
		if got := At(content, tc.path); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("At(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestInts(t *testing.T) {
	m := map[string]any{"i": int64(4), "f": float64(8), "half": 2.5, "s": "4"}
	for _, tc := range []struct {
		key  string
		want int64
		ok   bool
	}{{"i", 4, true}, {"f", 8, true}, {"half", 0, false}, {"s", 0, false}, {"none", 0, false}} {
		if got, ok := Int(m, tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("Int(%q) = %d, %v; want %d, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
	if IntOr(m, "none", 7) != 7 || IntOr(m, "i", 7) != 4 {
		t.Error("IntOr does not fall back to its default")
	}
}

func TestContainers(t *testing.T) {
	content := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"initContainers": []any{map[string]any{"name": "envoy", "image": "envoy", "restartPolicy": "Always"}, "not a map"},
		"containers":     []any{map[string]any{"name": "app", "image": "app:1"}},
	}}}}
	cs := Containers(content, "spec.template.spec")
	var got []string
	for _, c := range cs {
		got = append(got, c.Path+" "+c.Name)
	}
	want := []string{"spec.template.spec.initContainers[0] envoy", "spec.template.spec.containers[0] app"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Containers: got %q, want %q", got, want)
	}
	if !cs[0].RestartAlways() || cs[1].RestartAlways() || !cs[0].Init || cs[1].Init {
		t.Errorf("Init/RestartAlways wrong: %+v", cs)
	}
	if cs[1].Field("resources") != "spec.template.spec.containers[0].resources" {
		t.Errorf("Field: %s", cs[1].Field("resources"))
	}
	if Containers(content, "spec.nothing") != nil {
		t.Error("Containers of a missing spec should be nil")
	}
}
