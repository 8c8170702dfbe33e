package discover

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// TestChartParsedOnce: releases of one chart load and parse it once, and
// each renders its own copy: a subchart that one release's values turn
// off stays on for the next (Helm's ProcessDependencies changes the chart
// it renders).
func TestChartParsedOnce(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "-{{ .Release.Name }}}\ndata: {a: b}\n"
	}
	dir := writeTree(t, map[string]string{
		"charts/app/Chart.yaml":                    "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 1.0.0\n  condition: sub.enabled\n",
		"charts/app/values.yaml":                   "sub: {enabled: true}\n",
		"charts/app/templates/main.yaml":           cm("main"),
		"charts/app/charts/sub/Chart.yaml":         "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
		"charts/app/charts/sub/templates/sub.yaml": cm("sub"),
	})
	var releases []*manifest.Object
	for i, enabled := range []bool{true, false, true} {
		hr := fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: r%d, namespace: apps}
spec:
  interval: 1m
  chart:
    spec:
      chart: ./charts/app
      sourceRef: {kind: GitRepository, name: repo, namespace: flux-system}
  values:
    sub: {enabled: %t}
`, i, enabled)
		objs, errs := manifest.Parse(filepath.Join(dir, fmt.Sprintf("r%d.yaml", i)), []byte(hr))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		releases = append(releases, objs...)
	}
	out := RenderHelmReleases(releases, nil, Options{GitSource: func(ns, name, _ string) (string, bool) {
		return dir, ns == "flux-system" && name == "repo"
	}})
	if out.Loaded != 1 {
		t.Errorf("the chart was loaded %d times for 3 releases, want once", out.Loaded)
	}
	if len(out.Units) != 3 {
		t.Fatalf("%d units, want 3", len(out.Units))
	}
	for i, want := range []int{2, 1, 2} {
		u := out.Units[i]
		if len(u.Source.Errs) > 0 || len(u.Source.Objects) != want {
			t.Errorf("release r%d: %d objects (errors %v), want %d (the subchart on, off, on)", i, len(u.Source.Objects), u.Source.Errs, want)
		}
	}
}
