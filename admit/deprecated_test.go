package admit

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// TestDeprecatedCRDVersion: a custom resource of a version its CRD marks
// deprecated gets the server's warning: the CRD's deprecationWarning, else
// apiextensions-apiserver's default naming the newest served version.
func TestDeprecatedCRDVersion(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - {name: v1alpha1, served: true, storage: false, deprecated: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1beta1, served: true, storage: false, deprecated: true, deprecationWarning: "use example.com/v1 Widget, v1beta1 goes in 2.0", schema: {openAPIV3Schema: {type: object}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v2alpha1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
---
`
	cases := []struct{ version, want string }{
		{"v1alpha1", "schema/server-warning example.com/v1alpha1 Widget is deprecated; use example.com/v1 Widget @apiVersion"},
		{"v1beta1", "schema/server-warning use example.com/v1 Widget, v1beta1 goes in 2.0 @apiVersion"},
		{"v1", ""},
	}
	for _, tc := range cases {
		o, r := admitOne(t, manifest.LatestKube, crd+"apiVersion: example.com/"+tc.version+"\nkind: Widget\nmetadata: {name: w, namespace: shop}\n")
		got := strings.TrimSpace(describe(o, r))
		if i := strings.Index(got, " ("); i >= 0 {
			got = got[:i]
		}
		if got != tc.want || r.Rejected {
			t.Errorf("%s: %q (rejected %v), want %q", tc.version, got, r.Rejected, tc.want)
		}
	}
}
