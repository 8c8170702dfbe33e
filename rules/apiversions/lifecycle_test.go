package apiversions

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// lifecycle is what k8s.io/api's prerelease-lifecycle-gen adds to beta types.
type lifecycle interface {
	APILifecycleDeprecated() (major, minor int)
	APILifecycleRemoved() (major, minor int)
}

// TestTableMatchesK8sAPI checks every entry whose type k8s.io/api v0.37.2
// still carries against its lifecycle tags: the release that deprecated it,
// and the release that stops serving it (the API server enforces the latter).
func TestTableMatchesK8sAPI(t *testing.T) {
	checked := 0
	for _, a := range Table() {
		gv, err := schema.ParseGroupVersion(a.APIVersion)
		if err != nil {
			t.Fatalf("%s: %v", a.APIVersion, err)
		}
		obj, err := scheme.Scheme.New(gv.WithKind(a.Kind))
		if err != nil {
			if a.Source == "k8s.io/api" {
				t.Errorf("%s %s: marked as from k8s.io/api but not in its scheme", a.APIVersion, a.Kind)
			}
			t.Logf("not in k8s.io/api: %s %s", a.APIVersion, a.Kind)
			continue
		}
		lc, ok := obj.(lifecycle)
		if !ok {
			t.Errorf("%s %s: no lifecycle tags in k8s.io/api", a.APIVersion, a.Kind)
			continue
		}
		checked++
		dmaj, dmin := lc.APILifecycleDeprecated()
		rmaj, rmin := lc.APILifecycleRemoved()
		dep := manifest.KubeVersion{Major: dmaj, Minor: dmin}
		rem := manifest.KubeVersion{Major: rmaj, Minor: rmin}
		if dep != a.Deprecated {
			t.Errorf("%s %s: deprecated %s, k8s.io/api says %s", a.APIVersion, a.Kind, a.Deprecated, dep)
		}
		if a.Removed != (manifest.KubeVersion{}) && rem != a.Removed {
			t.Errorf("%s %s: removed %s, k8s.io/api says %s", a.APIVersion, a.Kind, a.Removed, rem)
		}
		if r, ok := obj.(interface {
			APILifecycleReplacement() schema.GroupVersionKind
		}); ok && a.Source == "k8s.io/api" {
			if gvk := r.APILifecycleReplacement(); gvk.Version != "" && !strings.HasPrefix(a.Replacement, gvk.GroupVersion().String()) {
				t.Errorf("%s %s: replacement %q, k8s.io/api says %s", a.APIVersion, a.Kind, a.Replacement, gvk.GroupVersion())
			}
		}
	}
	t.Logf("%d of %d entries checked against k8s.io/api", checked, len(Table()))
	if checked < 40 {
		t.Errorf("only %d entries checked against k8s.io/api; the scheme lookup is broken", checked)
	}
}
