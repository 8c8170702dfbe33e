package flux_test

import (
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/flux"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/yaml"
)

// memCache is the content cache in memory (manifest.Cache).
type memCache struct {
	mu sync.Mutex
	m  map[[32]byte][]byte
}

func (c *memCache) Get(key [32]byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

func (c *memCache) Put(key [32]byte, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[32]byte][]byte{}
	}
	c.m[key] = data
}

// damage cuts every record short.
func (c *memCache) damage() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.m {
		c.m[k] = v[:len(v)/2]
	}
}

// discoverCached runs discovery with the Flux controller in the current
// directory through cache (nil: none) and returns everything it found, as
// text, and the units it rendered (not restored), sorted.
func discoverCached(t *testing.T, sources map[string]string, cache manifest.Cache) (string, []string) {
	t.Helper()
	var mu sync.Mutex
	var rendered []string
	opts := discover.Options{Controllers: []discover.Controller{&flux.Controller{Sources: sources}},
		Rendered: func(kind, name string) {
			mu.Lock()
			rendered = append(rendered, kind+" "+name)
			mu.Unlock()
		}}
	if cache != nil {
		opts.Cache = cache
	}
	res := discover.Discover([]string{"."}, opts)
	sort.Strings(rendered)
	return describe(t, res), rendered
}

// describe says all a discovery found: every unit's objects with where
// they are (every node's position, through the tree's digest), their unit,
// origin and cluster, and the warnings, errors, files and charts.
func describe(t *testing.T, res *discover.Result) string {
	t.Helper()
	var b strings.Builder
	for _, u := range res.Units {
		fmt.Fprintf(&b, "%s %s (%s)\n", u.Kind, u.Dir, u.Source.Path)
		for _, e := range u.Source.Errs {
			fmt.Fprintf(&b, "  error: %v\n", e)
		}
		for _, o := range u.Source.Objects {
			content, err := o.Content()
			if err != nil {
				t.Fatal(err)
			}
			y, _ := yaml.Marshal(content)
			sum := manifest.TreeSum(o.Node())
			fmt.Fprintf(&b, "  %s %s/%s at %s doc %d unit %q via %q ignore %q cluster %q tree %s\n%s", o.Kind, o.Namespace, o.Name, o.Pos(), o.Doc,
				o.Unit, o.Via, o.ViaIgnore, o.Cluster, hex.EncodeToString(sum[:8]), y)
		}
	}
	for _, list := range [][]error{res.Warnings, res.Errs} {
		for _, e := range list {
			fmt.Fprintf(&b, "%T %v\n", e, e)
		}
	}
	fmt.Fprintf(&b, "files %q\nskipped %v\ncharts %v\nmissing %v\n", res.Files, res.Skipped, res.Charts, res.MissingCharts)
	return b.String()
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRenderCacheIdentical: on the Flux fixtures and the example
// repositories, a run restored from the render cache finds exactly what
// the run that rendered found, and renders only what may not be
// remembered: a HelmRelease whose chart kiln cannot find (an error: the
// examples' charts are not in a chart cache here) and a build that noted a
// variable no postBuild sets (subst's apps).
func TestRenderCacheIdentical(t *testing.T) {
	gitops := gitopsDir(t)
	cases := []struct {
		name, dir string
		// warm are the renders the warm run still does.
		warm int
	}{
		{"subst", "testdata/subst", 1},
		{"parent", "testdata/parent", 0},
		{"missing", "testdata/missing", 0},
		{"ignore", "testdata/ignore", 0},
		// podinfo (staging's and production's), cert-manager, envoy-gateway.
		{"flux2-kustomize-helm-example", filepath.Join(gitops, "flux2-kustomize-helm-example"), 4},
		// kube-prometheus-stack, loki, promtail.
		{"flux2-monitoring-example", filepath.Join(gitops, "flux2-monitoring-example"), 3},
		// Its releases are in the tenants' repositories, which kiln does not read.
		{"flux2-multi-tenancy", filepath.Join(gitops, "flux2-multi-tenancy"), 0},
	}
	wd, _ := os.Getwd()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.dir
			if !filepath.IsAbs(src) {
				src = filepath.Join(wd, src)
			}
			dir := t.TempDir()
			copyTree(t, src, dir)
			t.Chdir(dir)
			t.Setenv("XDG_CACHE_HOME", t.TempDir()) // an empty chart cache
			cache := &memCache{}
			none, all := discoverCached(t, nil, nil)
			cold, coldRenders := discoverCached(t, nil, cache)
			warm, warmRenders := discoverCached(t, nil, cache)
			if cold != none {
				t.Errorf("a run through the cache differs from one without:\n%s\nwant:\n%s", cold, none)
			}
			if warm != cold {
				t.Errorf("the warm run differs from the cold one:\n%s\nwant:\n%s", warm, cold)
			}
			if !slices.Equal(coldRenders, all) {
				t.Errorf("cold renders %q, want every unit a run without cache renders, %q", coldRenders, all)
			}
			failed := 0
			for _, r := range warmRenders {
				if !strings.HasPrefix(r, "helmrelease ") {
					continue
				}
				failed++
				if !strings.Contains(warm, "chart cache") {
					t.Errorf("%s rendered again, but no release failed for want of its chart", r)
				}
			}
			if tc.name != "subst" && failed != len(warmRenders) {
				t.Errorf("the warm run rendered %q: only releases whose chart is missing may render again", warmRenders)
			}
			if len(warmRenders) != tc.warm {
				t.Errorf("the warm run rendered %d units %q, want %d (of %d)", len(warmRenders), warmRenders, tc.warm, len(all))
			}
			cache.damage()
			damaged, damagedRenders := discoverCached(t, nil, cache)
			if damaged != cold || !slices.Equal(damagedRenders, all) {
				t.Errorf("with damaged records: renders %q (want %q), output equal %v", damagedRenders, all, damaged == cold)
			}
		})
	}
}

// cacheRepo is a Flux repository whose units each read different files: a
// root Kustomization (clusters/prod), an apps Kustomization substituting
// a ConfigMap's variable and patching its Deployment, two HelmReleases of
// a chart in the repository, one with its values from a ConfigMap.
var cacheRepo = map[string]string{
	"clusters/prod/sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  url: https://git.example/fleet
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  path: ./clusters/prod
  sourceRef:
    kind: GitRepository
    name: flux-system
`,
	"clusters/prod/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  path: ./apps
  sourceRef:
    kind: GitRepository
    name: flux-system
  postBuild:
    substituteFrom:
      - kind: ConfigMap
        name: cluster-vars
`,
	"clusters/prod/vars.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-vars
  namespace: flux-system
data:
  REPLICAS: "2"
`,
	"apps/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - web.yaml
  - releases.yaml
  - one-values.yaml
patches:
  - path: replicas.yaml
`,
	"apps/replicas.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  replicas: ${REPLICAS}
`,
	"apps/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
`,
	"apps/releases.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: one
  namespace: apps
spec:
  chart:
    spec:
      chart: ./charts/podinfo
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
  valuesFrom:
    - kind: ConfigMap
      name: one-values
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: two
  namespace: apps
spec:
  chart:
    spec:
      chart: ./charts/podinfo
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
  values:
    replicaCount: 3
`,
	"apps/one-values.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: one-values
  namespace: apps
data:
  values.yaml: |
    replicaCount: 2
`,
}

// TestRenderCacheEdits: after one file changes, exactly the units that
// read it render again, the others are restored; and the run finds what a
// run without the cache finds.
func TestRenderCacheEdits(t *testing.T) {
	const (
		apps       = "kustomization apps"
		fluxApps   = "kustomization Kustomization flux-system/apps (clusters/prod/apps.yaml:1)"
		fluxSystem = "kustomization Kustomization flux-system/flux-system (clusters/prod/sync.yaml:9)"
		chart      = "chart charts/podinfo"
		one        = "helmrelease Kustomization flux-system/apps (clusters/prod/apps.yaml:1)#apps/one"
		two        = "helmrelease Kustomization flux-system/apps (clusters/prod/apps.yaml:1)#apps/two"
	)
	// (Flux builds apps twice, as written and as flux-system outputs it
	// with its owner labels: both builds read what apps reads.)
	cases := []struct {
		name, file, from, to string
		want                 []string
	}{
		{name: "nothing changed"},
		// The values ConfigMap: the builds that read its file, and the
		// release that takes its values.
		{"values ConfigMap", "apps/one-values.yaml", "replicaCount: 2", "replicaCount: 4", []string{apps, fluxApps, fluxApps, one}},
		// A chart's template: the chart and the releases that install it.
		{"chart template", "charts/podinfo/templates/service.yaml", "kind: Service", "kind: Service # edited", []string{chart, one, two}},
		// A kustomize patch: the builds that apply it.
		{"kustomize patch", "apps/replicas.yaml", "replicas: ${REPLICAS}", "replicas: ${REPLICAS} # edited", []string{apps, fluxApps, fluxApps}},
		// The ConfigMap a Kustomization substitutes from: the build that
		// reads its file and the build that substitutes it.
		{"substituted variable", "clusters/prod/vars.yaml", `REPLICAS: "2"`, `REPLICAS: "5"`, []string{fluxApps, fluxApps, fluxSystem}},
		// A release's own values: that release, and the builds that read it.
		{"release values", "apps/releases.yaml", "replicaCount: 3", "replicaCount: 5", []string{apps, fluxApps, fluxApps, two}},
	}
	wd, _ := os.Getwd()
	dir := t.TempDir()
	for name, data := range cacheRepo {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyTree(t, filepath.Join(wd, "../charts/testdata/podinfo"), filepath.Join(dir, "charts/podinfo"))
	t.Chdir(dir)
	sources := map[string]string{"GitRepository/flux-system/flux-system": "."}
	cache := &memCache{}
	_, all := discoverCached(t, sources, cache)
	// apps is built twice by Flux: as written in clusters/prod/apps.yaml
	// (a root: no other Kustomization's build read its file yet), and as
	// flux-system's build outputs it.
	if want := []string{chart, one, two, apps, fluxApps, fluxApps, fluxSystem}; !sameSet(all, want) {
		t.Fatalf("the cold run rendered %q, want %q", all, want)
	}
	for _, tc := range cases {
		if tc.file != "" {
			data, err := os.ReadFile(tc.file)
			if err != nil || !strings.Contains(string(data), tc.from) {
				t.Fatalf("%s: %s does not hold %q", tc.name, tc.file, tc.from)
			}
			os.WriteFile(tc.file, []byte(strings.Replace(string(data), tc.from, tc.to, 1)), 0o644)
		}
		got, renders := discoverCached(t, sources, cache)
		if !sameSet(renders, tc.want) {
			t.Errorf("%s: rendered %q, want %q", tc.name, renders, tc.want)
		}
		if uncached, _ := discoverCached(t, sources, nil); got != uncached {
			t.Errorf("%s: the run through the cache differs from one without:\n%s\nwant:\n%s", tc.name, got, uncached)
		}
	}
	if _, renders := discoverCached(t, sources, nil); !sameSet(renders, all) {
		t.Errorf("without the cache: rendered %q, want every unit %q", renders, all)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
