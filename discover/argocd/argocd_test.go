package argocd_test

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/argocd"
	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/manifest"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// repoURL is the fixtures' repository.
const repoURL = "https://git.example.com/team/deploy.git"

// render runs discovery with the Argo CD controller in dir (as the
// working directory, the lint root ".") and says what it rendered: each
// Application, its objects with where they are written and what they
// hold, the warnings, the units and plain files left.
func render(t *testing.T, dir string, c *argocd.Controller, cache *charts.Cache) string {
	t.Helper()
	// The fixture is a repository of its own (its root holds .git), as a
	// user's checkout is: Application paths are read from that root, not
	// from kiln's own repository around testdata.
	repo := t.TempDir()
	if err := os.CopyFS(repo, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	res := discover.Discover([]string{"."}, discover.Options{Controllers: []discover.Controller{c}, Charts: cache})
	var b strings.Builder
	for _, a := range c.Apps {
		fmt.Fprintf(&b, "Application %s (%s:%d)\n", a.Name, a.Pos.File, a.Pos.Line)
		for _, u := range a.Units {
			fmt.Fprintf(&b, " unit %s\n", u.Dir)
			for _, e := range u.Source.Errs {
				fmt.Fprintf(&b, "  error: %v\n", e)
			}
			for _, o := range u.Source.Objects {
				content, err := o.Content()
				if err != nil {
					t.Fatal(err)
				}
				y, err := yaml.Marshal(content)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "  %s %s/%s at %s via %q ignore %q\n", o.Kind, o.Namespace, o.Name, o.Pos(), o.Via, o.ViaIgnore)
				if p := o.Locate("spec.template.spec.containers[0].securityContext.privileged"); o.Kind == "Deployment" {
					fmt.Fprintf(&b, "   privileged at %s\n", p)
				}
				if o.Kind == "CustomResourceDefinition" || o.Kind == "Application" || o.Kind == "ApplicationSet" {
					continue
				}
				for _, l := range strings.Split(strings.TrimSpace(string(y)), "\n") {
					fmt.Fprintf(&b, "    %s\n", l)
				}
			}
		}
	}
	for _, u := range res.Units {
		if u.Kind != argocd.UnitKind {
			fmt.Fprintf(&b, "%s unit %s\n", u.Kind, u.Dir)
		}
	}
	for _, f := range res.Files {
		fmt.Fprintf(&b, "file %s\n", f)
	}
	for _, s := range res.Charts {
		fmt.Fprintf(&b, "chart %s\n", s)
	}
	for _, s := range res.MissingCharts {
		fmt.Fprintf(&b, "missing chart %s\n", s)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "%v\n", w)
	}
	for _, e := range res.Errs {
		fmt.Fprintf(&b, "input error: %v\n", e)
	}
	return b.String()
}

// cached returns a chart cache holding podinfo 6.14.1 (discover/charts'
// test chart) from https://charts.kiln.test/podinfo, fetched as kiln
// fetch does, from a repository served here.
func cached(t *testing.T) *charts.Cache {
	t.Helper()
	ch, err := loader.LoadDir("../charts/testdata/podinfo")
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Version = "6.14.1"
	p, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	idx := repo.NewIndexFile()
	if err := idx.MustAdd(ch.Metadata, filepath.Base(p), "", ""); err != nil {
		t.Fatal(err)
	}
	ip := filepath.Join(t.TempDir(), "index.yaml")
	if err := idx.WriteFile(ip, 0o644); err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(ip)
	mux := http.NewServeMux()
	mux.HandleFunc("/podinfo/"+filepath.Base(p), func(w http.ResponseWriter, _ *http.Request) { w.Write(data) })
	mux.HandleFunc("/podinfo/index.yaml", func(w http.ResponseWriter, _ *http.Request) { w.Write(index) })
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	c := &charts.Cache{Dir: t.TempDir()}
	f := &charts.Fetcher{Cache: c, Transport: tr, RepositoryConfig: filepath.Join(t.TempDir(), "none.yaml")}
	if _, err := f.Fetch(charts.Source{Type: "http", URL: "https://charts.kiln.test/podinfo", Chart: "podinfo", Version: "6.x"}); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRender(t *testing.T) {
	cases := []struct {
		name  string
		cache bool
		// params are argocd.generators.
		params map[string][]map[string]any
		golden string
	}{
		// multi-source $values; valuesObject over valueFiles with release
		// name, namespace, skipCrds, kubeVersion, apiVersions; parameters
		// (a privileged container set by one, reported at it), a string
		// parameter, a file parameter; a values file missing.
		{name: "helm"},
		// kustomize options: namePrefix/nameSuffix, images, labels,
		// annotations, replicas, patches, components.
		{name: "kustomize"},
		// directory recurse/include/exclude; jsonnet, a plugin, another
		// repository: one warning each.
		{name: "directory"},
		// app of apps with a cycle; managedNamespaceMetadata; kiln.dev/ignore.
		{name: "appofapps"},
		// ApplicationSets: matrix of git directories and a list
		// (goTemplate), git files (fasttemplate), a clusters generator.
		{name: "appset"},
		// ... whose clusters generator .kiln.yaml gives parameter sets.
		{name: "appset", golden: "appset-params", params: map[string][]map[string]any{
			"argocd/everywhere": {{"name": "in-cluster", "server": "https://kubernetes.default.svc"}}}},
		// kiln's own plugin: named, claimed by its discover, by name and
		// version; its namespace from the destination, a parameter, an env.
		{name: "plugin"},
		// .argocd-source.yaml and .argocd-source-<app>.yaml, Argo CD's own
		// test cases (testdata/overrides/apps/apps.yaml).
		{name: "overrides"},
		// ApplicationSet templatePatch, goTemplate and fasttemplate.
		{name: "templatepatch"},
		// a chart from the cache; one missing from it.
		{name: "chart", cache: true},
		{name: "chart", golden: "chart-uncached"},
	}
	for _, tc := range cases {
		golden := tc.golden
		if golden == "" {
			golden = tc.name
		}
		t.Run(golden, func(t *testing.T) {
			var cache *charts.Cache
			if tc.cache {
				cache = cached(t)
			} else {
				cache = &charts.Cache{Dir: t.TempDir()}
			}
			wd, _ := os.Getwd()
			c := &argocd.Controller{RepoURLs: []string{repoURL}, Parameters: tc.params}
			got := render(t, filepath.Join("testdata", tc.name), c, cache)
			path := filepath.Join(wd, "testdata", golden+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("render of testdata/%s differs from %s (go test -update rewrites it):\n%s", tc.name, path, got)
			}
		})
	}
}

// TestOverridesArgoCases: the parameter override files of Argo CD's own
// tests (testdata/overrides/app-parameters, a copy of argo-cd v3.6.2's
// reposerver/repository/testdata/app-parameters) give the image each of
// those tests asserts, for the Application name it asks with.
func TestOverridesArgoCases(t *testing.T) {
	cases := []struct {
		test, path, app string
		image           string // "": the Application is an error
	}{
		{"TestGenerateManifestsWithAppParameterFile/Single_global_override", "single-global", "any", "quay.io/argoprojlabs/argocd-e2e-container:0.2"},
		{"TestGenerateManifestsWithAppParameterFile/Single_global_override_Helm", "single-global-helm", "any", "quay.io/argoprojlabs/argocd-e2e-container:0.2"},
		{"TestGenerateManifestsWithAppParameterFile/Application_specific_override", "single-app-only", "testapp", "quay.io/argoprojlabs/argocd-e2e-container:0.3"},
		{"TestGenerateManifestsWithAppParameterFile/Application_specific_override_for_other_app", "single-app-only", "testapp2", "quay.io/argoprojlabs/argocd-e2e-container:0.1"},
		{"TestGetAppDetailsWithAppParameterFile/No_app_specific_override", "single-global", "testapp", "quay.io/argoprojlabs/argocd-e2e-container:0.2"},
		{"TestGetAppDetailsWithAppParameterFile/App_specific_override", "multi", "testapp", "quay.io/argoprojlabs/argocd-e2e-container:0.3"},
		{"TestGetAppDetailsWithAppParameterFile/App_specific_overrides_containing_non-mergeable_field", "multi", "unmergeable", "quay.io/argoprojlabs/argocd-e2e-container:0.3"},
		{"TestGetAppDetailsWithAppParameterFile/Broken_app-specific_overrides", "multi", "broken", ""},
	}
	src, err := filepath.Abs(filepath.Join("testdata", "overrides", "app-parameters"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.test, func(t *testing.T) {
			repo := t.TempDir()
			if err := os.CopyFS(filepath.Join(repo, "app-parameters"), os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s, namespace: argocd}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: guestbook}
  source: {repoURL: %s, path: app-parameters/%s}
`, tc.app, repoURL, tc.path)
			if err := os.WriteFile(filepath.Join(repo, "app.yaml"), []byte(app), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(repo)
			c := &argocd.Controller{RepoURLs: []string{repoURL}}
			discover.Discover([]string{"."}, discover.Options{Controllers: []discover.Controller{c}, Charts: &charts.Cache{Dir: t.TempDir()}})
			if len(c.Apps) != 1 || len(c.Apps[0].Units) != 1 {
				t.Fatalf("want one Application with one source rendered, got %d", len(c.Apps))
			}
			u := c.Apps[0].Units[0]
			if tc.image == "" {
				if len(u.Source.Errs) == 0 || !strings.Contains(u.Source.Errs[0].Error(), ".argocd-source-broken.yaml") {
					t.Fatalf("want an error naming .argocd-source-broken.yaml, got %v", u.Source.Errs)
				}
				return
			}
			if len(u.Source.Errs) > 0 {
				t.Fatal(u.Source.Errs)
			}
			var images []string
			for _, o := range u.Source.Objects {
				if o.Kind == "Deployment" && o.Name == "guestbook-ui" {
					images = append(images, containerImages(t, o)...)
				}
			}
			if len(images) != 1 || images[0] != tc.image {
				t.Errorf("guestbook-ui's images are %v, want [%s] as %s asserts", images, tc.image, tc.test)
			}
		})
	}
}

// containerImages are the images of a workload's containers.
func containerImages(t *testing.T, o *manifest.Object) []string {
	t.Helper()
	c, err := o.Content()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	cs, _, _ := unstructured.NestedSlice(c, "spec", "template", "spec", "containers")
	for _, x := range cs {
		if m, ok := x.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["image"]))
		}
	}
	return out
}

// TestTemplatePatch: the Applications testdata/templatepatch's
// ApplicationSets generate, as the ApplicationSet controller's
// applyTemplatePatch makes them: the patch rendered with each parameter
// set, spec.project kept, the ApplicationSet's namespace.
func TestTemplatePatch(t *testing.T) {
	c := &argocd.Controller{RepoURLs: []string{repoURL}}
	render(t, filepath.Join("testdata", "templatepatch"), c, &charts.Cache{Dir: t.TempDir()})
	want := map[string]map[string]string{
		"web-blue": {"metadata.namespace": "argocd", "spec.project": "default", "spec.syncPolicy.automated.prune": "true",
			"spec.source.helm.valueFiles": "[values-blue.yaml]"},
		"web-green": {"metadata.namespace": "argocd", "spec.project": "default", "spec.syncPolicy": "<nil>", "spec.source.helm.valueFiles": "<nil>"},
		"plain-red": {"metadata.labels.team": "red", "metadata.labels.drop": "<nil>", "spec.destination.namespace": "team-red",
			"spec.source.helm.parameters": "[map[name:replicas value:2]]"},
	}
	for _, a := range c.Apps {
		fields, ok := want[a.Name]
		if !ok {
			t.Errorf("unexpected Application %s", a.Name)
			continue
		}
		delete(want, a.Name)
		content, err := a.Object.Content()
		if err != nil {
			t.Fatal(err)
		}
		for path, v := range fields {
			got, _, _ := unstructured.NestedFieldNoCopy(content, strings.Split(path, ".")...)
			if fmt.Sprint(got) != v {
				t.Errorf("Application %s: %s is %v, want %s", a.Name, path, got, v)
			}
		}
	}
	for name := range want {
		t.Errorf("Application %s was not generated", name)
	}
}
