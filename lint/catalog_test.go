package lint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/admit/catalog"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// schemaFindings are a run's schema/… findings, as "file:line rule
// message", and the catalog entries it used.
func schemaFindings(t *testing.T, files []string, opts *rules.Options) ([]string, []string) {
	t.Helper()
	out, err := lint.Run(&rules.Engine{Checkers: checkers.All(), Options: opts}, lint.Input{Files: files}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Result.Close()
	if len(out.Errs) > 0 {
		t.Fatalf("input errors: %v", out.Errs)
	}
	var got []string
	out.Result.Each(func(f rules.Finding) error {
		if strings.HasPrefix(f.Rule, "schema/") {
			got = append(got, fmt.Sprintf("%s:%02d %s %s", filepath.Base(f.Pos.File), f.Pos.Line, f.Rule, f.Message))
		}
		if strings.HasPrefix(f.Pos.File, lint.CatalogFile) {
			t.Errorf("a finding on a catalog CRD: %v", f)
		}
		return nil
	})
	return got, out.Result.Catalog
}

// TestCatalog: custom resources without a CRD in the input are judged by
// the catalog's, through the same admission as the input's CRDs; the
// input's CRDs win over those of crds:, which win over the catalog's; a
// pinned version is used; the catalog off, or a kind in no catalog, is
// schema/no-crd.
func TestCatalog(t *testing.T) {
	dir := "testdata/catalog"
	inputCRD := filepath.Join(t.TempDir(), "crd.yaml")
	data, err := os.ReadFile(filepath.Join(dir, "precedence/input-crd.yaml.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inputCRD, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gizmo := filepath.Join(t.TempDir(), "gizmo.yaml")
	if err := os.WriteFile(gizmo, []byte("apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: apps}\nspec: {size: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	with := func(f func(o *rules.Options)) *rules.Options {
		o := rules.DefaultOptions()
		f(o)
		return o
	}
	cert := filepath.Join(dir, "precedence/certificate.yaml")
	crds := []string{filepath.Join(dir, "precedence/crds")}
	cases := []struct {
		name    string
		files   []string
		opts    *rules.Options
		want    []string // substrings, one per finding, in order
		catalog []string
	}{
		{"HelmRelease without chart or chartRef", []string{dir + "/bad/helmrelease.yaml"}, nil,
			[]string{"helmrelease.yaml:05 schema/invalid spec: Invalid value: either chart or chartRef must be set"}, []string{"flux v2.9.5"}},
		{"HTTPRoute breaking a CEL rule", []string{dir + "/bad/httproute.yaml"}, nil,
			[]string{"httproute.yaml:10 schema/invalid spec.rules[0].matches[0].path: Invalid value: value must be an absolute path and start with '/'"}, []string{"gateway-api v1.7.0"}},
		{"ExternalSecret with an unknown field", []string{dir + "/bad/externalsecret.yaml"}, nil,
			[]string{`externalsecret.yaml:06 schema/unknown-field unknown field "spec.refreshIntreval"`}, []string{"external-secrets v1.3.2"}},
		{"Certificate with privateKey.algorithm DSA", []string{dir + "/bad/certificate.yaml"}, nil,
			[]string{`certificate.yaml:09 schema/invalid spec.privateKey.algorithm: Unsupported value: "DSA"`}, []string{"cert-manager v1.21.2"}},
		{"a version the catalog's CRD does not serve", []string{dir + "/bad/ocirepository.yaml"}, nil,
			[]string{"ocirepository.yaml:02 schema/unserved-version the CustomResourceDefinition ocirepositories.source.toolkit.fluxcd.io does not serve version v1beta2; served: v1"}, []string{"flux v2.9.5"}},
		{"a pinned version serving it (deprecated there)", []string{dir + "/bad/ocirepository.yaml"}, with(func(o *rules.Options) { o.CatalogVersions = map[string]string{"flux": "v2.7.5"} }),
			[]string{"ocirepository.yaml:02 schema/server-warning v1beta2 OCIRepository is deprecated, upgrade to v1"}, []string{"flux v2.7.5"}},
		{"valid custom resources", []string{dir + "/good/fleet.yaml"}, nil,
			nil, []string{"cert-manager v1.21.2", "flux v2.9.5", "gateway-api v1.7.0"}},
		{"the catalog off", []string{dir + "/bad/certificate.yaml"}, with(func(o *rules.Options) { o.CatalogOff = true }),
			[]string{"certificate.yaml:02 schema/no-crd cert-manager.io/v1 Certificate is a custom resource whose CustomResourceDefinition is not in the input"}, nil},
		{"a kind in no catalog", []string{gizmo}, nil,
			[]string{"gizmo.yaml:01 schema/no-crd example.com/v1 Gizmo is a custom resource"}, nil},
		{"catalog only", []string{cert}, nil,
			[]string{`certificate.yaml:10 schema/invalid spec.privateKey.algorithm: Unsupported value: "DSA"`}, []string{"cert-manager v1.21.2"}},
		{"crds: over the catalog", []string{cert}, with(func(o *rules.Options) { o.CRDs = crds }),
			nil, nil},
		{"the input over crds: and the catalog", []string{cert, inputCRD}, with(func(o *rules.Options) { o.CRDs = crds }),
			[]string{`certificate.yaml:08 schema/invalid spec.secretName: Invalid value: "string": spec.secretName in body must be of type integer`}, nil},
		{"the input over the catalog", []string{cert, inputCRD}, nil,
			[]string{`certificate.yaml:08 schema/invalid spec.secretName: Invalid value: "string": spec.secretName in body must be of type integer`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, used := schemaFindings(t, tc.files, tc.opts)
			if len(got) != len(tc.want) {
				t.Fatalf("findings:\n%s\nwant %d:\n%s", strings.Join(got, "\n"), len(tc.want), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("finding %d:\n%s\nwant a prefix\n%s", i, got[i], tc.want[i])
				}
			}
			if !slices.Equal(used, tc.catalog) {
				t.Errorf("catalog entries used %v, want %v", used, tc.catalog)
			}
		})
	}
}

// TestCatalogLazy: a run without custom resources reads nothing of the
// catalog, not even its index.
func TestCatalogLazy(t *testing.T) {
	f := filepath.Join(t.TempDir(), "deploy.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx:1.27}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := catalog.Reads()
	_, used := schemaFindings(t, []string{f}, nil)
	if n := catalog.Reads() - before; n != 0 || len(used) != 0 {
		t.Errorf("a run of one Deployment read the catalog %d times, used %v", n, used)
	}
}
