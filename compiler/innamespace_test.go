package compiler

import (
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// TestExpandIn: objects without a namespace get ns in their metadata and
// their decoded content (what the checkers read), those with one and
// cluster-scoped kinds keep theirs, and an empty ns changes nothing.
func TestExpandIn(t *testing.T) {
	const in = `apiVersion: v1
kind: ConfigMap
metadata: {name: plain}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: placed, namespace: other}
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
`
	for _, tc := range []struct {
		ns   string
		want map[string]string // object name → namespace in metadata and content
	}{
		{"shop", map[string]string{"plain": "shop", "placed": "other", "team": "", "reader": ""}},
		{"", map[string]string{"plain": "", "placed": "other", "team": "", "reader": ""}},
	} {
		objs, _, errs := manifest.ParseSkipping("in.yaml", []byte(in))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		x, err := ExpandIn(objs, tc.ns)
		if err != nil {
			t.Fatal(err)
		}
		if len(x.All) != len(tc.want) {
			t.Fatalf("ns %q: %d objects, want %d", tc.ns, len(x.All), len(tc.want))
		}
		for _, o := range x.All {
			c, err := o.Content()
			if err != nil {
				t.Fatal(err)
			}
			md, _ := c["metadata"].(map[string]any)
			got, _ := md["namespace"].(string)
			if want := tc.want[o.Name]; o.Namespace != want || got != want {
				t.Errorf("ns %q: %s/%s has namespace %q, %q in its content; want %q", tc.ns, o.Kind, o.Name, o.Namespace, got, want)
			}
		}
	}
}
