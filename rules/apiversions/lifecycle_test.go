package apiversions

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/admit/servedversions"
	"github.com/kilnhq/kiln/manifest"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// deprecation is what k8s.io/api adds to a deprecated type: its
// prerelease-lifecycle-gen tags for beta types, hand-written methods for the
// GA ones it deprecates without a removal (v1 Endpoints, ComponentStatus).
type deprecation interface {
	APILifecycleDeprecated() (major, minor int)
}

// removal is the release that stops serving a prerelease type.
type removal interface {
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
		lc, ok := obj.(deprecation)
		if !ok {
			t.Errorf("%s %s: no lifecycle tags in k8s.io/api", a.APIVersion, a.Kind)
			continue
		}
		checked++
		dmaj, dmin := lc.APILifecycleDeprecated()
		var rem manifest.KubeVersion
		if r, ok := obj.(removal); ok {
			rmaj, rmin := r.APILifecycleRemoved()
			rem = manifest.KubeVersion{Major: rmaj, Minor: rmin}
		}
		dep := manifest.KubeVersion{Major: dmaj, Minor: dmin}
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

// TestDeprecatedKindsListed: every kind k8s.io/api v0.37.2 marks deprecated
// by a release kiln targets, at a version some release serves by default,
// is in the table, GA ones included (the API
// server warns "v1 Endpoints is deprecated in v1.33+" on every create: kiln
// says so as api/deprecated).
func TestDeprecatedKindsListed(t *testing.T) {
	listed := map[schema.GroupVersionKind]bool{}
	for _, a := range Table() {
		gv, _ := schema.ParseGroupVersion(a.APIVersion)
		listed[gv.WithKind(a.Kind)] = true
	}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") || gvk.Version == "__internal" || listed[gvk] {
			continue
		}
		if e, ok := servedversions.Lookup(gvk.Group, gvk.Version, gvk.Kind); !ok || e.Served.Empty() {
			continue // a subresource's type (Scale, Eviction), or a version no release serves by default
		}
		obj, err := scheme.Scheme.New(gvk)
		if err != nil {
			continue
		}
		d, ok := obj.(deprecation)
		if !ok {
			continue
		}
		maj, min := d.APILifecycleDeprecated()
		if maj == 0 || manifest.LatestKube.Less(manifest.KubeVersion{Major: maj, Minor: min}) {
			continue
		}
		t.Errorf("%s %s: k8s.io/api marks it deprecated in %d.%d, but apis.yaml does not list it", gvk.GroupVersion(), gvk.Kind, maj, min)
	}
}
