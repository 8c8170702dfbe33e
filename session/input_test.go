package session

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/session/settings"
)

// inputTree is a repository with an App spec and its config file, a plain
// manifest, a kustomization, a previous build's output and an excluded
// directory.
var inputTree = map[string]string{
	".kiln.yaml": "exclude: [\"vendor/**\"]\n",
	"app.yaml": `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: shop, namespace: shop}
spec:
  configs:
    envoy: {files: {envoy.yaml: conf/envoy.yaml}}
  services:
    web:
      containers: [{name: app, image: "ghcr.io/acme/shop:1.0"}]
`,
	"conf/envoy.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: looks-like-one}\n",
	"cm.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: shop}\n",
	"kust/kustomization.yaml": "resources: [deploy.yaml]\nnamePrefix: k-\n",
	"kust/deploy.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: shop}\n",
	"out/old.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: built-before, namespace: shop}\n",
	"vendor/x.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vendored, namespace: shop}\n",
}

func TestInputStep(t *testing.T) {
	tests := []struct {
		name string
		o    readOptions
		// objects are the objects read (kind/name, sorted), App specs
		// compiled.
		objects string
	}{
		{"as kiln lint reads: kustomizations rendered, excludes applied", readOptions{},
			"ConfigMap/built-before ConfigMap/envoy ConfigMap/k-cm ConfigMap/looks-like-one ConfigMap/plain Deployment/web"},
		{"a build: nothing rendered, the output directory and the spec's config files left out", readOptions{outDir: "out", plain: true, dropConfigs: true},
			"ConfigMap/cm ConfigMap/envoy ConfigMap/plain Deployment/web"},
		{"kiln fix's edits read in place of the files", readOptions{plain: true, edited: map[string][]byte{"cm.yaml": []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: edited}\n")}, keepData: true},
			"ConfigMap/built-before ConfigMap/cm ConfigMap/envoy ConfigMap/looks-like-one Deployment/web Secret/edited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			writeTree(t, ".", inputTree)
			s, err := New(settings.New(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			in, err := s.read(nil, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if errs := in.errs(); len(errs) > 0 {
				t.Fatalf("input errors: %v", errs)
			}
			var got []string
			for _, o := range in.x.All {
				got = append(got, o.Kind+"/"+o.Name)
			}
			sort.Strings(got)
			if strings.Join(got, " ") != tt.objects {
				t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, " "), tt.objects)
			}
			if tt.o.keepData {
				for i, f := range in.files {
					if want, ok := tt.o.edited[f.Path]; ok && string(in.data[i]) != string(want) {
						t.Errorf("%s: data %q, want the edit", f.Path, in.data[i])
					}
					if len(in.data[i]) == 0 {
						t.Errorf("%s: no data kept", f.Path)
					}
				}
			}
		})
	}
}

// kiln rules PATH reads the policies as kiln lint would: the config's
// excludes apply.
func TestRulesReadLikeLint(t *testing.T) {
	t.Chdir(t.TempDir())
	policy := func(name string) string {
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: " + name + "}\nspec:\n  validations: [{expression: 'true'}]\n"
	}
	writeTree(t, ".", map[string]string{
		".kiln.yaml":         "exclude: [\"vendor/**\"]\n",
		"policies/mine.yaml": policy("mine"),
		"vendor/theirs.yaml": policy("theirs"),
	})
	all, err := Rules([]string{"."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range all {
		if strings.HasPrefix(r.ID, "policy/") && filepath.Base(r.ID) != "unknown-kind" && !strings.HasPrefix(r.ID, "policy/kiln-") {
			got = append(got, r.ID)
		}
	}
	if strings.Join(got, ",") != "policy/mine" {
		t.Errorf("policy rules = %v, want policy/mine only (vendor/ is excluded)", got)
	}
}
