package discover

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/manifest"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	sigsyaml "sigs.k8s.io/yaml"
)

// helmBinary finds helm v4.3.2 (the reference: Argo CD 3.6 runs it; Flux
// 2.9 links its library): on PATH, else where .ci/run caches it. Missing,
// the test fails when CI=true and skips elsewhere.
func helmBinary(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	for _, p := range []string{filepath.Join(cache, "kiln", "tools", "helm-v4.3.2", "helm"), "helm"} {
		if lp, err := exec.LookPath(p); err == nil {
			if out, err := exec.Command(lp, "version", "--template", "{{.Version}}").Output(); err == nil && strings.HasPrefix(string(out), "v4.3") {
				return lp
			}
		}
	}
	how := "GOBIN=~/.cache/kiln/tools/helm-v4.3.2 go install helm.sh/helm/v4/cmd/helm@v4.3.2 (.ci/run does)"
	if os.Getenv("CI") == "true" {
		t.Fatalf("helm v4.3.2 is not installed; %s. CI is set, so this is a failure, not a skip", how)
	}
	t.Skipf("helm v4.3.2 is not installed, so this test skips (with CI=true it fails); to run it: %s", how)
	return ""
}

// gitopsDir is ../shared/gitops beside the repository (KILN_GITOPS_DIR).
func gitopsDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("KILN_GITOPS_DIR")
	if d == "" {
		d = filepath.Join("..", "..", "shared", "gitops")
	}
	if _, err := os.Stat(d); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the GitOps examples are not at %s (KILN_GITOPS_DIR)", d)
		}
		t.Skipf("the GitOps examples are not at %s (set KILN_GITOPS_DIR), so this test skips", d)
	}
	return d
}

// TestHelmTemplateReference: every HelmRelease of ../shared/gitops whose
// chart is here (podinfo, packaged from its source and served as the
// examples' https://stefanprodan.github.io/podinfo) renders in kiln to
// what `helm template` of helm v4.3.2 gives with the values helm-controller
// computes (spec.values: these releases have no valuesFrom), the release
// name and namespace, the CRDs (install.crds defaults to Create) and
// kiln's Kubernetes version. Named differences: (1) kiln adds helm-
// controller's origin labels (helm.toolkit.fluxcd.io/name and /namespace),
// which its post-renderer puts on every object and helm template does
// not; (2) a name a template draws with randAlphaNum (podinfo's test
// pods, "podinfo-grpc-test-x7k2q") differs from run to run in either, so
// such a suffix is masked on both sides; (3) kiln puts the release
// namespace on namespaced built-in objects the chart leaves without one
// (podinfo's redis Deployment, Service, ConfigMap), as Helm's kube client
// does when helm-controller installs them, and helm template does not:
// the same is done to helm's output before comparing.
func TestHelmTemplateReference(t *testing.T) {
	helm := helmBinary(t)
	root := gitopsDir(t)
	const url = "https://stefanprodan.github.io/podinfo"
	cache := fetched(t, url)
	chartPath := ""
	rendered := 0
	for _, repoDir := range []string{"flux2-kustomize-helm-example", "flux2-monitoring-example", "flux2-multi-tenancy"} {
		dir := filepath.Join(root, repoDir)
		res := Discover([]string{dir}, Options{Charts: cache})
		releases := map[string]*manifest.Object{}
		for _, u := range res.Units {
			for _, o := range u.Source.Objects {
				if IsHelmRelease(o) {
					releases[manifest.UnitOf(o)+"#"+o.Namespace+"/"+o.Name] = o
				}
			}
		}
		for _, u := range res.Units {
			if u.Kind != "helmrelease" || len(u.Source.Errs) > 0 {
				continue
			}
			hr := releases[u.Dir]
			if hr == nil {
				t.Errorf("%s: no HelmRelease object for unit %s", repoDir, u.Dir)
				continue
			}
			t.Run(repoDir+"/"+u.Dir, func(t *testing.T) {
				c, _ := hr.Content()
				var spec helmRelease
				data, _ := json.Marshal(c)
				json.Unmarshal(data, &spec)
				if len(spec.Spec.ValuesFrom) > 0 {
					t.Fatalf("valuesFrom: this test passes spec.values only")
				}
				values, _ := sigsyaml.Marshal(spec.Spec.Values)
				vf := filepath.Join(t.TempDir(), "values.yaml")
				os.WriteFile(vf, values, 0o644)
				if chartPath == "" {
					ch, err := cache.Lookup(chartSourceOf(t, res, hr, &spec))
					if err != nil {
						t.Fatal(err)
					}
					chartPath = ch.Path
				}
				ns := hr.Namespace
				if spec.Spec.TargetNamespace != "" {
					ns = spec.Spec.TargetNamespace
				}
				kv := manifest.LatestKube
				args := []string{"template", releaseName(hr.Name, &spec), chartPath, "-n", ns, "-f", vf, "--include-crds",
					"--kube-version", fmt.Sprintf("v%d.%d.0", kv.Major, kv.Minor)}
				var stderr bytes.Buffer
				cmd := exec.Command(helm, args...)
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
				}
				want := helmCanonical(t, out, ns)
				got := canonicalObjects(t, u.Source.Objects)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("kiln's objects differ from helm template's:\nkiln:\n%s\nhelm:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
			rendered++
		}
	}
	if rendered == 0 {
		t.Fatal("no HelmRelease of the examples rendered")
	}
	t.Logf("%d HelmReleases rendered equal helm template's output", rendered)
}

// chartSourceOf is the cache source a podinfo release reads.
func chartSourceOf(t *testing.T, res *Result, hr *manifest.Object, spec *helmRelease) charts.Source {
	for _, s := range res.Charts {
		if spec.Spec.Chart != nil && s.Chart == spec.Spec.Chart.Spec.Chart {
			return s
		}
	}
	t.Fatalf("no chart source for %s/%s among %v", hr.Namespace, hr.Name, res.Charts)
	return charts.Source{}
}

// helmCanonical turns helm template's output into sorted JSON lines.
func helmCanonical(t *testing.T, out []byte, ns string) []string {
	t.Helper()
	var lines []string
	for _, doc := range strings.Split(string(out), "\n---") {
		var m map[string]any
		if err := sigsyaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("helm output: %v", err)
		}
		if m == nil {
			continue
		}
		maskRandom(m)
		withReleaseNamespace(m, ns)
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	sort.Strings(lines)
	return lines
}

// canonicalObjects is helmCanonical for kiln's objects, without the origin
// labels (the named difference).
func canonicalObjects(t *testing.T, objs []*manifest.Object) []string {
	t.Helper()
	var lines []string
	for _, o := range objs {
		c, err := o.Content()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(c)
		var m map[string]any
		json.Unmarshal(data, &m)
		if md, ok := m["metadata"].(map[string]any); ok {
			if l, ok := md["labels"].(map[string]any); ok {
				delete(l, originNameLabel)
				delete(l, originNamespaceLbl)
				if len(l) == 0 {
					delete(md, "labels")
				}
			}
			if a, ok := md["annotations"].(map[string]any); ok && len(a) == 0 {
				delete(md, "annotations")
			}
		}
		maskRandom(m)
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	sort.Strings(lines)
	return lines
}

// helmRandomSuffix is what `randAlphaNum 5 | lower` appends to a name.
var helmRandomSuffix = regexp.MustCompile(`-[a-z0-9]{5}$`)

// maskRandom masks the random suffix of a Helm test hook's name.
func maskRandom(m map[string]any) {
	md, _ := m["metadata"].(map[string]any)
	a, _ := md["annotations"].(map[string]any)
	if hook, _ := a["helm.sh/hook"].(string); strings.HasPrefix(hook, "test") {
		if name, _ := md["name"].(string); helmRandomSuffix.MatchString(name) {
			md["name"] = name[:len(name)-5] + "RANDOM"
		}
	}
}

// withReleaseNamespace sets ns on a namespaced built-in object of helm
// template's output that names none, as releaseNamespace does (named
// difference 3), on the decoded map.
func withReleaseNamespace(m map[string]any, ns string) {
	gv, err := k8sschema.ParseGroupVersion(fmt.Sprint(m["apiVersion"]))
	if err != nil {
		return
	}
	r, ok := builtinKinds().Lookup(gv.WithKind(fmt.Sprint(m["kind"])))
	md, _ := m["metadata"].(map[string]any)
	if ok && r.Namespaced && md != nil && md["namespace"] == nil {
		md["namespace"] = ns
	}
}
