package yamlnode

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestValueAndScalar(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a: 1\nb: ~\nc: [x]\na2: {d: e}\n"), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Content[0]
	for _, tt := range []struct {
		key, want string
		found     bool
	}{
		{"a", "1", true},
		{"b", "", true},   // null
		{"c", "", true},   // a sequence
		{"a2", "", true},  // a mapping
		{"d", "", false},  // nested keys are not m's
		{"zz", "", false}, // absent
		{"1", "", false},  // values are not keys
	} {
		v := Value(m, tt.key)
		if (v != nil) != tt.found || Scalar(v) != tt.want {
			t.Errorf("Value(m, %q) = %v, Scalar %q; want found=%v, %q", tt.key, v, Scalar(v), tt.found, tt.want)
		}
	}
	if Value(nil, "a") != nil || Value(m.Content[5], "x") != nil {
		t.Error("Value of nil or of a sequence found something")
	}
}
