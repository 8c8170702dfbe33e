package discover

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/manifest"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// podinfoRepo serves the podinfo chart (packaged from
// charts/testdata/podinfo, the source the Flux examples install) as an
// HTTP Helm repository, and returns a transport that sends every host to
// it, so that sources may name any URL.
func podinfoRepo(t *testing.T, versions ...string) *http.Transport {
	t.Helper()
	return podinfoRepoAt(t, "/podinfo", versions...)
}

// podinfoRepoAt serves the repository at prefix over TLS (any host name
// accepted by the transport returned).
func podinfoRepoAt(t *testing.T, prefix string, versions ...string) *http.Transport {
	t.Helper()
	ch, err := loader.LoadDir("charts/testdata/podinfo")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	idx := repo.NewIndexFile()
	for _, v := range versions {
		ch.Metadata.Version = v
		p, err := chartutil.Save(ch, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		if err := idx.MustAdd(ch.Metadata, filepath.Base(p), "", ""); err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc(prefix+"/"+filepath.Base(p), func(w http.ResponseWriter, _ *http.Request) { w.Write(data) })
	}
	ip := filepath.Join(t.TempDir(), "index.yaml")
	if err := idx.WriteFile(ip, 0o644); err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(ip)
	mux.HandleFunc(prefix+"/index.yaml", func(w http.ResponseWriter, _ *http.Request) { w.Write(index) })
	addr := srv.Listener.Addr().String()
	return &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
}

// fetched returns a chart cache holding podinfo 6.14.1 from
// http://charts.kiln.test/podinfo, fetched as kiln fetch does.
func fetched(t *testing.T, url string) *charts.Cache {
	t.Helper()
	c := &charts.Cache{Dir: t.TempDir()}
	prefix := strings.TrimSuffix(url[strings.Index(url[len("https://"):], "/")+len("https://"):], "/")
	f := &charts.Fetcher{Cache: c, Transport: podinfoRepoAt(t, prefix, "6.14.1"), RepositoryConfig: filepath.Join(t.TempDir(), "none.yaml")}
	if _, err := f.Fetch(charts.Source{Type: "http", URL: url, Chart: "podinfo", Version: "6.14.1"}); err != nil {
		t.Fatal(err)
	}
	return c
}

func releaseUnit(t *testing.T, res *Result, name string) *Unit {
	t.Helper()
	for _, u := range res.Units {
		if u.Kind == "helmrelease" && strings.HasSuffix(u.Dir, "#apps/"+name) {
			return u
		}
	}
	t.Fatalf("no unit for HelmRelease apps/%s among %d units", name, len(res.Units))
	return nil
}

func objectOf(t *testing.T, u *Unit, kind string) *manifest.Object {
	t.Helper()
	for _, o := range u.Source.Objects {
		if o.Kind == kind {
			return o
		}
	}
	t.Fatalf("%s: no %s among %d objects (errors %v)", u.Dir, kind, len(u.Source.Objects), u.Source.Errs)
	return nil
}

// lineOf returns the 1-based line of the first line of file holding s.
func lineWith(t *testing.T, file, s string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%s holds no %q", file, s)
	return 0
}

// TestHelmReleases renders testdata/flux's HelmReleases from a cache kiln
// fetch filled: valuesFrom (a values.yaml, then a value at a targetPath)
// under spec.values; a privileged container set through values, placed
// at that values line; one set through a valuesFrom ConfigMap, placed at
// the valuesFrom entry (and a targetPath value at its targetPath); a post-renderer; a chart never fetched (one error
// naming kiln fetch, the rest rendered); a values schema violation at the
// values line, its library's schema read from the chart's files.
func TestHelmReleases(t *testing.T) {
	cache := fetched(t, "https://charts.kiln.test/podinfo")
	dir := "testdata/flux"
	res := Discover([]string{dir}, Options{Charts: cache, GitSource: func(ns, name, _ string) (string, bool) {
		return dir, ns == "flux-system" && name == "flux-system"
	}})

	podinfo := releaseUnit(t, res, "podinfo")
	if len(podinfo.Source.Errs) > 0 {
		t.Fatalf("podinfo: %v", podinfo.Source.Errs)
	}
	dep := objectOf(t, podinfo, "Deployment")
	for _, o := range podinfo.Source.Objects {
		if !strings.HasPrefix(o.Via, "HelmRelease ") || !strings.HasSuffix(o.Via, "/podinfo") {
			t.Errorf("%s: via %q, want the HelmRelease that rendered it", o.Ref(), o.Via)
		}
	}
	c, _ := dep.Content()
	if got, _ := nested(c, "spec", "replicas"); got != int64(2) && got != float64(2) && got != 2 {
		t.Errorf("replicas = %v (%T), want 2 from valuesFrom's values.yaml", got, got)
	}
	containers, _ := nested(c, "spec", "template", "spec", "containers")
	ctr := containers.([]any)[0].(map[string]any)
	if ctr["image"] != "ghcr.io/stefanprodan/podinfo:6.14.0" {
		t.Errorf("image = %v, want the targetPath tag 6.14.0", ctr["image"])
	}
	if dep.Name != "web-podinfo" || dep.Labels[originNameLabel] != "podinfo" || dep.Labels[originNamespaceLbl] != "apps" {
		t.Errorf("Deployment %s labels %v: want web-podinfo (the release name is targetNamespace-name) and the origin labels", dep.Name, dep.Labels)
	}
	if env := ctr["env"]; !strings.Contains(toString(env), "from the ConfigMap") || !strings.Contains(toString(env), "#34577c") {
		t.Errorf("env = %v, want the ConfigMap's ui.message and spec.values' ui.color merged", env)
	}
	file := filepath.Join(dir, "apps", "podinfo.yaml")
	pos := dep.Locate("spec.template.spec.containers[0].securityContext.privileged")
	if want := lineWith(t, file, "privileged: true"); pos.File != file || pos.Line != want {
		t.Errorf("privileged at %s, want %s:%d (the values line)", pos, file, want)
	}

	// Values a valuesFrom ConfigMap sets are at the entry that takes them.
	fromcm := objectOf(t, releaseUnit(t, res, "fromcm"), "Deployment")
	cfile := filepath.Join(dir, "apps", "fromcm.yaml")
	for field, want := range map[string]int{
		"spec.template.spec.containers[0].securityContext.privileged": lineWith(t, cfile, "- kind: ConfigMap"),
		"spec.template.spec.containers[0].securityContext.runAsUser":  lineWith(t, cfile, "targetPath:"),
	} {
		if pos := fromcm.Locate(field); pos.File != cfile || pos.Line != want {
			t.Errorf("fromcm's %s at %s, want %s:%d (its valuesFrom entry)", field, pos, cfile, want)
		}
	}

	patched := releaseUnit(t, res, "patched")
	pdep := objectOf(t, patched, "Deployment")
	if pdep.Annotations["kiln.test/patched"] != "yes" || pdep.Labels[originNameLabel] != "patched" {
		t.Errorf("patched Deployment: annotations %v labels %v, want the post-renderer's patch and the origin labels", pdep.Annotations, pdep.Labels)
	}
	pc, _ := pdep.Content()
	pctrs, _ := nested(pc, "spec", "template", "spec", "containers")
	if img := pctrs.([]any)[0].(map[string]any)["image"]; img != "ghcr.io/stefanprodan/podinfo:6.13.0" {
		t.Errorf("patched image = %v, want the post-renderer's 6.13.0", img)
	}
	if pdep.Name != "podinfo-patched" {
		t.Errorf("patched Deployment %s, want releaseName podinfo-patched", pdep.Name)
	}

	missing := releaseUnit(t, res, "missing")
	if len(missing.Source.Errs) != 1 || !strings.Contains(missing.Source.Errs[0].Error(), "run `kiln fetch`") {
		t.Errorf("missing: errors %v, want one naming kiln fetch", missing.Source.Errs)
	}
	if !strings.HasPrefix(missing.Source.Errs[0].Error(), filepath.Join(dir, "apps", "missing.yaml")+":") {
		t.Errorf("missing's error %q is not at its HelmRelease", missing.Source.Errs[0])
	}
	if len(res.MissingCharts) != 1 || res.MissingCharts[0].URL != "https://charts.kiln.test/elsewhere" {
		t.Errorf("MissingCharts = %v, want elsewhere's chart", res.MissingCharts)
	}

	strict := releaseUnit(t, res, "strict")
	if len(strict.Source.Errs) != 1 {
		t.Fatalf("strict: errors %v, want one", strict.Source.Errs)
	}
	msg := strict.Source.Errs[0].Error()
	sfile := filepath.Join(dir, "apps", "strict.yaml")
	want := sfile + ":" + strconv.Itoa(lineWith(t, sfile, "mode: fast")) + ":" // the first violation, sorted
	if !strings.HasPrefix(msg, want) || !strings.Contains(msg, "at '/replicas'") || !strings.Contains(msg, "at '/lib/mode'") {
		t.Errorf("strict: %q\nwant at %s, the replicas violation and the library schema's (read from the chart's files)", msg, want)
	}
}

func toString(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			b.WriteString(x + " ")
		}
	}
	walk(v)
	return b.String()
}

// TestSchemaRefNeverConnects: a values schema's $ref by URL that the
// chart's files do not hold is skipped with a note, and no connection is
// attempted: the URL names a listener that fails the test if dialled.
func TestSchemaRefNeverConnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialled := make(chan bool, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			dialled <- true
		}
	}()
	schema := `{"type":"object","properties":{"a":{"$ref":"http://` + ln.Addr().String() + `/schemas/a.json"},"b":{"type":"integer"}}}`
	ch := &chart.Chart{Metadata: &chart.Metadata{Name: "remote", Version: "1.0.0", APIVersion: "v2"}, Schema: []byte(schema)}
	notes, err := validateValues(ch, common.Values{"a": "anything", "b": "x"})
	if err == nil || !strings.Contains(err.Error(), "at '/b'") {
		t.Errorf("validation = %v, want b's violation (the rest of the schema still checked)", err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "is not checked") {
		t.Errorf("notes = %q, want one saying the $ref is not checked", notes)
	}
	select {
	case <-dialled:
		t.Fatal("validating the values opened a connection")
	default:
	}
}
