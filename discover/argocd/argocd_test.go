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
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
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
