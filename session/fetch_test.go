package session

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/kilnhq/kiln/session/settings"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	helmregistry "helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// TestFetch: kiln fetch reads a HelmRelease's HelmRepository (an HTTP Helm
// repository, httptest over TLS) and another's OCIRepository (an
// in-process OCI registry on 127.0.0.1, plain HTTP because the source says
// insecure), pulls podinfo from both into the chart cache, and an offline
// check then finds nothing missing; before the fetch it finds both.
func TestFetch(t *testing.T) {
	ch, err := loader.LoadDir("../discover/charts/testdata/podinfo")
	if err != nil {
		t.Fatal(err)
	}
	pkgPath, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pkg, _ := os.ReadFile(pkgPath)

	mux := http.NewServeMux()
	helmRepo := httptest.NewTLSServer(mux)
	defer helmRepo.Close()
	idx := repo.NewIndexFile()
	idx.MustAdd(ch.Metadata, "podinfo-6.14.1.tgz", "", "")
	ip := filepath.Join(t.TempDir(), "index.yaml")
	idx.WriteFile(ip, 0o644)
	index, _ := os.ReadFile(ip)
	mux.HandleFunc("/podinfo/index.yaml", func(w http.ResponseWriter, _ *http.Request) { w.Write(index) })
	mux.HandleFunc("/podinfo/podinfo-6.14.1.tgz", func(w http.ResponseWriter, _ *http.Request) { w.Write(pkg) })

	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	regHost := strings.TrimPrefix(reg.URL, "http://")
	rc, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "c.json")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Push(pkg, regHost+"/charts/podinfo:6.14.1", helmregistry.PushOptStrictMode(false)); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	input := `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: podinfo, namespace: apps}
spec: {url: "https://charts.kiln.test/podinfo", secretRef: {name: repo-creds}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: podinfo-oci, namespace: apps}
spec:
  url: oci://` + regHost + `/charts/podinfo
  insecure: true
  ref: {semver: 6.x}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: from-http, namespace: apps}
spec:
  chart:
    spec: {chart: podinfo, version: "*", sourceRef: {kind: HelmRepository, name: podinfo}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: from-http-too, namespace: apps}
spec:
  chart:
    spec: {chart: podinfo, version: "*", sourceRef: {kind: HelmRepository, name: podinfo}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: from-oci, namespace: apps}
spec:
  chartRef: {kind: OCIRepository, name: podinfo-oci}
`
	if err := os.WriteFile(filepath.Join(dir, "apps.yaml"), []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	helmAddr := helmRepo.Listener.Addr().String()
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if strings.HasPrefix(addr, "charts.kiln.test:") {
				addr = helmAddr
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}
	t.Setenv("HELM_REGISTRY_CONFIG", filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	cacheDir := t.TempDir()
	s, err := New(settings.New(), []string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check, err := s.Fetch([]string{dir}, FetchOptions{OfflineCheck: true, CacheDir: cacheDir})
	if err != nil || len(check.Missing) != 2 {
		t.Fatalf("offline check before fetching: %+v, %v; want both sources missing", check, err)
	}
	out, err := s.Fetch([]string{dir}, FetchOptions{CacheDir: cacheDir, Transport: transport})
	if err != nil || len(out.Errs) > 0 || len(out.Charts) != 2 {
		t.Fatalf("fetch: %+v, %v; want both charts", out, err)
	}
	// The HelmRepository's secretRef (two releases use it) is said once;
	// the fetch goes on with the credentials kiln has.
	if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "HelmRepository apps/podinfo, Secret repo-creds") || !strings.Contains(out.Notes[0], "cannot read cluster Secrets") {
		t.Errorf("notes %q, want one naming the HelmRepository's Secret", out.Notes)
	}
	for _, c := range out.Charts {
		if c.Version != "6.14.1" {
			t.Errorf("%s: version %s, want 6.14.1", c.Source, c.Version)
		}
	}
	check, err = s.Fetch([]string{dir}, FetchOptions{OfflineCheck: true, CacheDir: cacheDir})
	if err != nil || len(check.Missing) != 0 || len(check.Charts) != 2 {
		t.Errorf("offline check after fetching: %+v, %v; want nothing missing", check, err)
	}
}
