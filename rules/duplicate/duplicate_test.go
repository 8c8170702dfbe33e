package duplicate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
)

func TestFixtures(t *testing.T) { ruletest.CheckFixtures(t, Checker) }

func TestRuleDocs(t *testing.T) { ruletest.CheckRules(t, Checker) }

// TestUnits: copies in two files of one directory are duplicates (the
// message names the first file); copies in separate directories, or in
// units a renderer named, are not; units that deploy into one cluster
// (manifest.Object.Cluster) are related, units of two clusters are not.
func TestUnits(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\n"
	parse := func(file, unit string) *manifest.Object {
		objs, errs := manifest.Parse(file, []byte(cm))
		if len(errs) > 0 || len(objs) != 1 {
			t.Fatal(errs)
		}
		objs[0].Unit = unit
		return objs[0]
	}
	inCluster := func(o *manifest.Object, cluster string) *manifest.Object {
		o.Cluster = cluster
		return o
	}
	for _, tc := range []struct {
		name string
		objs []*manifest.Object
		want int
	}{
		{"one directory", []*manifest.Object{parse("deploy/a.yaml", ""), parse("deploy/b.yaml", "")}, 1},
		{"two directories", []*manifest.Object{parse("prod/a.yaml", ""), parse("staging/a.yaml", "")}, 0},
		{"two charts in one directory", []*manifest.Object{parse("out/a.yaml", "chart:a"), parse("out/b.yaml", "chart:b")}, 0},
		{"one chart, two template files", []*manifest.Object{parse("c/templates/a.yaml", "chart:c"), parse("c/x/b.yaml", "chart:c")}, 1},
		{"two units of one cluster", []*manifest.Object{inCluster(parse("apps/a.yaml", "Kustomization apps"), "clusters/prod"), inCluster(parse("infra/a.yaml", "Kustomization infra"), "clusters/prod")}, 1},
		{"two clusters", []*manifest.Object{inCluster(parse("apps/a.yaml", "Kustomization apps"), "clusters/prod"), inCluster(parse("apps/a.yaml", "Kustomization apps (staging)"), "clusters/staging")}, 0},
		{"a release and the folder that declares it", []*manifest.Object{parse("deploy/a.yaml", ""), inCluster(parse("chart/t.yaml", "deploy#shop/web"), "deploy")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}}).Run(tc.objs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) != tc.want {
				t.Fatalf("got %d findings, want %d: %+v", len(res.Findings), tc.want, res.Findings)
			}
			if tc.want == 1 {
				f := res.Findings[0]
				if f.Pos.File != tc.objs[1].File || !strings.Contains(f.Message, tc.objs[0].File+":1:1") {
					t.Errorf("finding at %s, message %q: want it at the second copy, naming the first", f.Pos, f.Message)
				}
			}
		})
	}
}

// TestAlternativeBundles: a file that repeats several objects of another
// file in its directory gets one finding for the pair, naming the count.
func TestAlternativeBundles(t *testing.T) {
	bundle := "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a, namespace: x}\n---\n" +
		"apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: b, namespace: x}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n"
	var objs []*manifest.Object
	for _, f := range []string{"m/install.yaml", "m/namespace-install.yaml", "m/ha-install.yaml"} {
		os, errs := manifest.Parse(f, []byte(bundle))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		objs = append(objs, os...)
	}
	res, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}}).Run(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 2 {
		t.Fatalf("got %d findings, want one per later file: %+v", len(res.Findings), res.Findings)
	}
	for _, f := range res.Findings {
		if !strings.Contains(f.Message, "defines 3 objects that m/install.yaml also defines") {
			t.Errorf("%s: %s", f.Pos, f.Message)
		}
	}
}

// TestGenerateNameAdmitted: objects written with generateName only are
// never duplicates, also once admission has named them as the server does
// (the fixtures judge objects as written; a lint admits them first).
func TestGenerateNameAdmitted(t *testing.T) {
	const src = `apiVersion: batch/v1
kind: Job
metadata: {generateName: migrate-, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: migrate:1}]
---
apiVersion: batch/v1
kind: Job
metadata: {generateName: migrate-, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: migrate:2}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {a: b}
`
	res := ruletest.RunAdmitted(t, "jobs.yaml", []byte(src), rules.DefaultOptions(), Checker)
	var got []string
	for _, f := range res.Findings {
		got = append(got, fmt.Sprintf("%d %s %s", f.Pos.Line, f.Rule, f.Object.Name))
	}
	if want := []string{"25 object/duplicate settings"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q (the named ConfigMap's copy only)", got, want)
	}
}
