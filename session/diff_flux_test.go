package session

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/report/objdiff"
	"github.com/kilnhq/kiln/session/settings"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// podinfoServer serves podinfo (discover/charts/testdata/podinfo) at each
// version given, its image tag and appVersion the version, as the HTTP
// Helm repository https://stefanprodan.github.io/podinfo, and returns the
// transport that reaches it.
func podinfoServer(t *testing.T, versions ...string) *http.Transport {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	idx := repo.NewIndexFile()
	for _, v := range versions {
		dir := filepath.Join(t.TempDir(), "podinfo")
		copyDir(t, filepath.Join(testWD, "../discover/charts/testdata/podinfo"), dir)
		if v != "6.14.1" { // the chart's own
			editFile(t, filepath.Join(dir, "values.yaml"), func(s string) string { return strings.Replace(s, "  tag: 6.14.1\n", "  tag: "+v+"\n", 1) })
		}
		ch, err := loader.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		ch.Metadata.Version, ch.Metadata.AppVersion = v, v
		p, err := chartutil.Save(ch, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		idx.MustAdd(ch.Metadata, filepath.Base(p), "", "")
		mux.HandleFunc("/podinfo/"+filepath.Base(p), func(w http.ResponseWriter, _ *http.Request) { w.Write(data) })
	}
	ip := filepath.Join(t.TempDir(), "index.yaml")
	idx.WriteFile(ip, 0o644)
	index, _ := os.ReadFile(ip)
	mux.HandleFunc("/podinfo/index.yaml", func(w http.ResponseWriter, _ *http.Request) { w.Write(index) })
	addr := srv.Listener.Addr().String()
	return &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}
}

// fluxExample makes the working directory a copy of ../shared/gitops/
// flux2-kustomize-helm-example whose production podinfo is pinned to
// 6.14.0, committed on main, with the change that bumps it to 6.14.1 and
// sets two values (replicas, a memory limit) in the working tree, and
// the charts of both in the chart cache (kiln fetch, from a local
// repository); XDG_CACHE_HOME is the test's own.
func fluxExample(t *testing.T) {
	t.Helper()
	src := os.Getenv("KILN_GITOPS_DIR")
	if src == "" {
		src = filepath.Join("..", "..", "shared", "gitops")
	}
	src = filepath.Join(src, "flux2-kustomize-helm-example")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("the GitOps examples are not at %s (KILN_GITOPS_DIR)", src)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the chart cache and the content cache
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	t.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
	dir := t.TempDir()
	copyDir(t, src, dir)
	os.RemoveAll(filepath.Join(dir, ".git"))
	const values = "apps/production/podinfo-values.yaml"
	editFile(t, filepath.Join(dir, values), func(s string) string { return strings.Replace(s, `">=1.0.0"`, `"6.14.0"`, 1) })
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	t.Chdir(dir)

	transport := podinfoServer(t, "6.14.0", "6.14.1")
	fetch := func() {
		s, err := New(settings.New(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fetch(nil, FetchOptions{Transport: transport}); err != nil {
			t.Fatal(err)
		}
	}
	fetch()
	editFile(t, values, func(s string) string {
		return strings.Replace(s, `"6.14.0"`, `"6.14.1"`, 1) + "    replicaCount: 3\n    resources:\n      limits:\n        memory: 512Mi\n"
	})
	fetch()
}

// TestDiffFluxExample: on a copy of ../shared/gitops/flux2-kustomize-
// helm-example whose production podinfo is pinned to 6.14.0, a change
// bumps it to 6.14.1 and sets two values (replicas, a memory limit); the
// charts come from the chart cache, filled by kiln fetch from a local
// repository. The diff is the production HelmRelease's objects (and the
// HelmRelease itself in its Flux Kustomization); testdata/diff-flux.md is
// its Markdown.
func TestDiffFluxExample(t *testing.T) {
	fluxExample(t)
	d := diffRun(t, "main", filepath.Join(os.Getenv("XDG_CACHE_HOME"), "kiln", "judged"))
	if len(d.Errs) > 0 {
		t.Fatalf("input errors the change brought: %v", d.Errs)
	}
	var md strings.Builder
	if err := objdiff.Write(&md, "markdown", d.Report, objdiff.Options{Context: 3, Limit: objdiff.CommentLimit}); err != nil {
		t.Fatal(err)
	}
	const release = "HelmRelease podinfo/podinfo in Kustomization flux-system/apps (clusters/production/apps.yaml:2)"
	var apps []string
	paths := map[string]bool{}
	for _, a := range d.Report.Apps {
		apps = append(apps, a.Name)
		for _, o := range a.Objects {
			for _, c := range o.Changes {
				paths[a.Name+" "+o.Kind+" "+c.Path] = true
			}
		}
	}
	if strings.Join(apps, "\n") != release+"\nKustomization flux-system/apps (clusters/production/apps.yaml:2)" {
		t.Errorf("apps %q: want production's release and the Flux Kustomization that holds it (staging's is unchanged)", apps)
	}
	for _, p := range []string{"Deployment spec.template.spec.containers[name=podinfo].image", "Deployment spec.replicas",
		"Deployment spec.template.spec.containers[name=podinfo].resources.limits", `Service metadata.labels["helm.sh/chart"]`} {
		if !paths[release+" "+p] {
			t.Errorf("no change of %s", p)
		}
	}
	golden.Check(t, filepath.Join(testWD, "testdata/diff-flux.md"), []byte(md.String()))
}
