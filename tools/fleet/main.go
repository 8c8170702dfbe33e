// Command fleet writes the Flux fleet `make bench` lints: one repository in
// the layout of ../shared/gitops/flux2-kustomize-helm-example (a cluster
// folder whose Kustomizations build apps/ and infrastructure/, each app a
// kustomize base of a Namespace and a HelmRelease, patched by the cluster's
// overlay), with N HelmReleases of the podinfo chart, as a home-lab fleet
// installs one chart with per-app values (some through a values ConfigMap,
// valuesFrom with targetPath). With -cache it fills a kiln chart cache with
// that chart, as `kiln fetch` would, from a Helm repository served in
// process on the loopback interface (no other connection is opened).
//
//	fleet [-releases 70] [-chart ../shared/gitops/charts/podinfo] [-cache DIR [-url URL]] OUT
//	fleet -cache-only -cache DIR -url URL -chart DIR -
package main

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

	"github.com/kilnhq/kiln/discover/charts"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// repoURL is the Helm repository the fleet's HelmRepository names; the
// cache is filled as if fetched from it.
const repoURL = "http://charts.kiln.bench/podinfo"

func main() {
	releases := flag.Int("releases", 70, "HelmReleases in the fleet")
	chartDir := flag.String("chart", "../shared/gitops/charts/podinfo", "the chart every release installs")
	cacheDir := flag.String("cache", "", "fill this chart cache with the chart (as kiln fetch)")
	url := flag.String("url", repoURL, "the Helm repository the cache holds the chart for (-cache)")
	only := flag.Bool("cache-only", false, "fill the cache only (the charts of another repository's HelmReleases); OUT is not written")
	flag.Parse()
	if flag.NArg() != 1 || *releases < 1 {
		fmt.Fprintln(os.Stderr, "usage: fleet [-releases N] [-chart DIR] [-cache DIR] OUT")
		os.Exit(2)
	}
	ch, err := loader.LoadDir(*chartDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
	if !*only {
		if err := write(flag.Arg(0), *releases, ch.Metadata.Version); err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
			os.Exit(1)
		}
	}
	if *cacheDir != "" {
		if err := fill(*cacheDir, *chartDir, *url); err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
			os.Exit(1)
		}
	}
}

// write writes the fleet's files under out.
func write(out string, n int, version string) error {
	files := clusterFiles()
	// Version constraints as fleets write them; all select the one version.
	constraints := []string{version, "6.x", ">=6.0.0", "~" + version}
	for i := 1; i <= n; i++ {
		addApp(files, i, version, constraints[i%len(constraints)])
	}
	files["apps/fleet/kustomization.yaml"] = overlay(n)
	return writeFiles(out, files)
}

// clusterFiles are the fleet's files but the apps: the Flux cluster folder,
// the HelmRepository and kiln's settings.
func clusterFiles() map[string]string {
	return map[string]string{
		"clusters/fleet/flux-system/gotk-sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  ref:
    branch: main
  url: https://git.example/fleet
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m
  path: ./clusters/fleet
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`,
		".kiln.yaml": "flux:\n  sources:\n    GitRepository/flux-system/flux-system: .\n",
		"clusters/fleet/flux-system/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - gotk-sync.yaml\n",
		"clusters/fleet/infrastructure.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra-sources
  namespace: flux-system
spec:
  interval: 1h
  path: ./infrastructure/sources
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`,
		"clusters/fleet/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  dependsOn:
    - name: infra-sources
  interval: 1h
  path: ./apps/fleet
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  postBuild:
    substitute:
      cluster_domain: fleet.example
`,
		"infrastructure/sources/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - podinfo.yaml\n",
		"infrastructure/sources/podinfo.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: podinfo
  namespace: flux-system
spec:
  interval: 1h
  url: ` + repoURL + "\n",
	}
}

// addApp adds app i's kustomize base: its Namespace, its HelmRelease of the
// chart at constraint, and for every fourth app a values ConfigMap its
// release reads (valuesFrom, one key through targetPath).
func addApp(files map[string]string, i int, version, constraint string) {
	app := fmt.Sprintf("app-%02d", i)
	base := "apps/base/" + app + "/"
	resources := []string{"namespace.yaml", "release.yaml"}
	valuesFrom := ""
	if i%4 == 0 {
		resources = append(resources, "values.yaml")
		valuesFrom = `  valuesFrom:
    - kind: ConfigMap
      name: ` + app + `-values
    - kind: ConfigMap
      name: ` + app + `-values
      valuesKey: tag
      targetPath: image.tag
`
		files[base+"values.yaml"] = fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s-values
  namespace: %s
data:
  values.yaml: |
    replicaCount: %d
    ui:
      message: "%s from its values ConfigMap"
  tag: "%s"
`, app, app, 1+i%3, app, version)
	}
	files[base+"kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: " + app + "\nresources:\n  - " + strings.Join(resources, "\n  - ") + "\n"
	files[base+"namespace.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    toolkit.fluxcd.io/tenant: team-%d\n    pod-security.kubernetes.io/enforce: baseline\n", app, i%5)
	extra := ""
	switch {
	case i%3 == 0:
		extra = "    redis:\n      enabled: true\n      repository: public.ecr.aws/docker/library/redis\n      tag: 8.6.2\n"
	case i%5 == 0:
		extra = "    hpa:\n      enabled: true\n      maxReplicas: 4\n    resources:\n      limits:\n        memory: 256Mi\n"
	}
	files[base+"release.yaml"] = fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: %s
  namespace: %s
spec:
  interval: 30m
  chart:
    spec:
      chart: podinfo
      version: "%s"
      sourceRef:
        kind: HelmRepository
        name: podinfo
        namespace: flux-system
  install:
    strategy:
      name: RetryOnFailure
%s  values:
    ui:
      message: "%s"
    ingress:
      enabled: true
      className: nginx
      hosts:
        - host: %s.${cluster_domain}
          paths:
            - path: /
              pathType: ImplementationSpecific
%s`, app, app, constraint, valuesFrom, app, app, extra)
}

// overlay is the fleet overlay's kustomization: every app's base, with a
// patch to every HelmRelease.
func overlay(n int) string {
	var overlay strings.Builder
	overlay.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&overlay, "  - ../base/app-%02d\n", i)
	}
	overlay.WriteString(`patches:
  - target:
      kind: HelmRelease
    patch: |
      - op: add
        path: /spec/values/ui/color
        value: "#34577c"
`)
	return overlay.String()
}

// writeFiles writes files under out.
func writeFiles(out string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fill stores the chart in the cache at dir as `kiln fetch` stores it from
// url: packaged, indexed and fetched with kiln's own Fetcher from a
// repository served in process (over TLS for an https URL).
func fill(dir, chartDir, url string) error {
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fleet-chart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pkg, err := chartutil.Save(ch, tmp)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(pkg)
	if err != nil {
		return err
	}
	idx := repo.NewIndexFile()
	if err := idx.MustAdd(ch.Metadata, filepath.Base(pkg), url, ""); err != nil {
		return err
	}
	ip := filepath.Join(tmp, "index.yaml")
	if err := idx.WriteFile(ip, 0o644); err != nil {
		return err
	}
	index, err := os.ReadFile(ip)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/index.yaml"):
			w.Write(index)
		case strings.HasSuffix(r.URL.Path, "/"+filepath.Base(pkg)):
			w.Write(data)
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewUnstartedServer(mux)
	tr := &http.Transport{}
	if strings.HasPrefix(url, "https://") {
		srv.StartTLS()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // the in-process server's own certificate
	} else {
		srv.Start()
	}
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	f := &charts.Fetcher{
		Cache:            &charts.Cache{Dir: dir},
		Transport:        tr,
		RepositoryConfig: filepath.Join(tmp, "no-repositories.yaml"),
		RegistryConfig:   filepath.Join(tmp, "no-registry.json"),
	}
	_, err = f.Fetch(charts.Source{Type: "http", URL: url, Chart: ch.Name(), Version: ch.Metadata.Version})
	return err
}
