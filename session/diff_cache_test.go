package session

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/kilnhq/kiln/session/settings"
)

// renders counts the units discovery renders (not restored from the
// content cache) while fn runs.
func renders(t *testing.T, fn func()) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	onRender = func(kind, name string) {
		mu.Lock()
		got = append(got, kind+" "+name)
		mu.Unlock()
	}
	defer func() { onRender = nil }()
	fn()
	slices.Sort(got)
	return got
}

// TestDiffRendersOnce: kiln diff renders both sides through the content
// cache, its files named alike on both (the revision read from the place
// of the current directory in its copy): on a clean tree each unit
// renders once for both sides (and both of each side's reads); after a
// change to one values file, only the app that reads it renders again,
// the revision's side all restored.
func TestDiffRendersOnce(t *testing.T) {
	fluxExample(t)
	cacheDir := filepath.Join(t.TempDir(), "judged")
	git(t, ".", "stash", "-q")
	s, err := New(settings.New(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A release whose chart is not in the chart cache (cert-manager's and
	// envoy-gateway's: the test's repository serves podinfo alone) fails,
	// and a failed render is never remembered: it renders on every read.
	failed := map[string]bool{}
	all := renders(t, func() {
		for _, u := range s.discover([]string{"."}, readOptions{}).Units {
			if len(u.Source.Errs) > 0 {
				failed[u.Kind+" "+u.Dir] = true
			}
		}
	})
	if len(all) < 10 || len(failed) != 2 {
		t.Fatalf("the example renders %d units: %q; failed: %v", len(all), all, failed)
	}
	ok := func(list []string) []string {
		return slices.DeleteFunc(list, func(r string) bool { return failed[r] })
	}
	all = ok(all)
	clean := ok(renders(t, func() { diffRun(t, "main", cacheDir) }))
	if !slices.Equal(clean, all) {
		t.Errorf("a diff of a clean tree rendered %q, want each unit once: %q", clean, all)
	}
	git(t, ".", "stash", "pop", "-q")
	const app = "Kustomization flux-system/apps (clusters/production/apps.yaml:2)"
	// The values file is read by apps/production's kustomization, which
	// production's Flux Kustomization apps builds, and the release takes
	// the values that build outputs.
	want := []string{
		"helmrelease " + app + "#podinfo/podinfo",
		"kustomization " + app,
		"kustomization apps/production",
	}
	changed := ok(renders(t, func() { diffRun(t, "main", cacheDir) }))
	if !slices.Equal(changed, want) {
		t.Errorf("after a change to one values file the diff rendered %q, want production's podinfo app alone: %q", changed, want)
	}
}
