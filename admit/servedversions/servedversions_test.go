package servedversions

import (
	"testing"

	"k8s.io/apimachinery/pkg/version"

	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
)

// TestRange: the table covers exactly the minors kiln supports, so that a
// new Kubernetes minor in manifest fails here until the table is
// generated again (CONTRIBUTING.md, "Add a Kubernetes version").
func TestRange(t *testing.T) {
	if First != manifest.OldestKube.Minor || Last != manifest.LatestKube.Minor {
		t.Errorf("the table covers 1.%d to 1.%d, kiln supports %s to %s: run go generate ./admit/servedversions", First, Last, manifest.OldestKube, manifest.LatestKube)
	}
}

// TestEntries: each entry exists within the covered minors, is served only
// where it exists, is found by Lookup, and Versions lists a kind's
// versions as the API server prefers them (GA, beta, alpha, newest first).
func TestEntries(t *testing.T) {
	if len(table) < 150 {
		t.Fatalf("%d entries; the generated table is incomplete", len(table))
	}
	for _, e := range table {
		name := e.APIVersion() + " " + e.Kind
		if e.Exists.Empty() || e.Exists.From < First || e.Exists.To > Last || e.Exists.From > e.Exists.To {
			t.Errorf("%s: exists %v, outside 1.%d-1.%d", name, e.Exists, First, Last)
		}
		if !e.Served.Empty() && (e.Served.From < e.Exists.From || e.Served.To > e.Exists.To || e.Served.From > e.Served.To) {
			t.Errorf("%s: served %v where it does not exist (%v)", name, e.Served, e.Exists)
		}
		if got, ok := Lookup(e.Group, e.Version, e.Kind); !ok || got != e {
			t.Errorf("%s: Lookup = %+v, %v", name, got, ok)
		}
		if !HasGroup(e.Group) {
			t.Errorf("%s: HasGroup(%q) is false", name, e.Group)
		}
		vs := Versions(e.Group, e.Kind)
		for i := 1; i < len(vs); i++ {
			if version.CompareKubeAwareVersionStrings(vs[i-1].Version, vs[i].Version) <= 0 {
				t.Errorf("%s: Versions lists %s before %s", name, vs[i-1].Version, vs[i].Version)
			}
		}
	}
	if _, ok := Lookup("example.com", "v1", "Gizmo"); ok || HasGroup("example.com") {
		t.Error("a custom resource's group is in the table")
	}
}

func TestSpanHas(t *testing.T) {
	for _, tc := range []struct {
		s     Span
		minor int
		want  bool
	}{
		{Span{20, 24}, 19, false},
		{Span{20, 24}, 20, true},
		{Span{20, 24}, 24, true},
		{Span{20, 24}, 25, false},
		{Span{}, 0, false},
		{Span{}, 20, false},
	} {
		if got := tc.s.Has(manifest.KubeVersion{Major: 1, Minor: tc.minor}); got != tc.want {
			t.Errorf("%v.Has(1.%d) = %v, want %v", tc.s, tc.minor, got, tc.want)
		}
	}
	if (Span{20, 24}).Has(manifest.KubeVersion{Major: 2, Minor: 20}) {
		t.Error("Span{20, 24} has 2.20")
	}
}
