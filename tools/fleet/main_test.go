package main

import (
	"testing"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/discover/flux"
)

// TestFleet: the fleet written and its chart cache filled, discovery
// builds its Flux Kustomizations and renders every HelmRelease from the
// cache, each once, the chart loaded once.
func TestFleet(t *testing.T) {
	out, cache := t.TempDir(), t.TempDir()
	if err := write(out, 5, "6.14.1"); err != nil {
		t.Fatal(err)
	}
	if err := fill(cache, "../../discover/charts/testdata/podinfo", repoURL); err != nil {
		t.Fatal(err)
	}
	t.Chdir(out)
	c := &flux.Controller{Sources: map[string]string{"GitRepository/flux-system/flux-system": "."}}
	res := discover.Discover([]string{"."}, discover.Options{Charts: &charts.Cache{Dir: cache}, Controllers: []discover.Controller{c}})
	if len(res.MissingCharts) > 0 || len(res.Errs) > 0 {
		t.Fatalf("missing charts %v, errors %v", res.MissingCharts, res.Errs)
	}
	releases := 0
	for _, u := range res.Units {
		if u.Kind != "helmrelease" {
			continue
		}
		releases++
		if len(u.Source.Errs) > 0 || len(u.Source.Objects) == 0 {
			t.Errorf("%s: %d objects, errors %v", u.Dir, len(u.Source.Objects), u.Source.Errs)
		}
	}
	if releases != 5 || len(c.Builds) != 3 {
		t.Errorf("%d releases rendered and %d Flux Kustomizations built, want 5 and 3 (flux-system, apps, infra-sources)", releases, len(c.Builds))
	}
}
