package cel

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/cel/common"
)

// TestParamObjectSameCELValue checks that a param converted once gives the
// CEL value the server's per-evaluation JSON round trip gives, including the
// cases where the round trip changes a value (a whole float becomes an int,
// an empty map stays a map, a nil stays null).
func TestParamObjectSameCELValue(t *testing.T) {
	for name, content := range map[string]map[string]any{
		"configmap": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "p", "namespace": "default"},
			"data": map[string]any{"images": "envoy,istio-proxy", "target": "1.30"}},
		"numbers": {"apiVersion": "example.com/v1", "kind": "Limits", "metadata": map[string]any{"name": "p"},
			"spec": map[string]any{"whole": float64(3), "half": 2.5, "int": int64(7), "big": int64(1) << 60, "neg": int64(-1)}},
		"shapes": {"apiVersion": "example.com/v1", "kind": "Limits", "metadata": map[string]any{"name": "p"},
			"spec": map[string]any{"empty": map[string]any{}, "list": []any{"a", int64(1), true, nil, []any{}}, "nil": nil, "unicode": "päßé\u2028"}},
	} {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: content}
			want, err := serverForm(u)
			if err != nil {
				t.Fatal(err)
			}
			p := newParamObject(u)
			got, err := p.ToUnstructuredWithError()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("converted form:\n got %#v\nwant %#v", got, want)
			}
			wantVal, gotVal := common.SchemalessTypedToVal(u), common.SchemalessTypedToVal(p)
			if eq := wantVal.Equal(gotVal); eq.Value() != true {
				t.Errorf("CEL values differ:\n got %v\nwant %v", gotVal, wantVal)
			}
			if name == "numbers" {
				// The round trip is real: the server sees 3.0 as the int 3.
				if _, isInt := got.(map[string]any)["spec"].(map[string]any)["whole"].(int64); !isInt {
					t.Errorf("spec.whole = %T, want int64 as after the server's JSON round trip", got.(map[string]any)["spec"].(map[string]any)["whole"])
				}
			}
		})
	}
}
