package flux_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/flux"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// fluxVersion is the Flux CLI .ci/build-flux.sh builds (Flux v2.9.5 links
// github.com/fluxcd/pkg/kustomize v1.35.6, the version kiln pins).
const fluxVersion = "v2.9.5"

// gitopsRepos are the Flux example repositories the reference test builds
// (../shared/gitops beside the repository, or $KILN_GITOPS_DIR).
var gitopsRepos = []string{"flux2-kustomize-helm-example", "flux2-monitoring-example", "flux2-multi-tenancy"}

// fluxBinary returns the Flux CLI: $KILN_FLUX, else the one .ci/run caches,
// else flux on PATH. Missing, the test fails in CI and skips elsewhere.
func fluxBinary(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("KILN_FLUX")}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(home, ".cache")
		}
	}
	candidates = append(candidates, filepath.Join(cache, "kiln", "tools", "flux-"+fluxVersion, "flux"))
	if p, err := exec.LookPath("flux"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); c != "" && err == nil && !st.IsDir() {
			return c
		}
	}
	how := "bash .ci/build-flux.sh ~/.cache/kiln/tools/flux-" + fluxVersion + " (or set KILN_FLUX)"
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatalf("the Flux CLI %s is not built; .ci/run builds it (%s). CI is set, so this is a failure, not a skip", fluxVersion, how)
	}
	t.Skipf("the Flux CLI %s is not built, so this test skips (with CI=true it fails); to run it: %s", fluxVersion, how)
	return ""
}

func gitopsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KILN_GITOPS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "gitops")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Skipf("the Flux example repositories are not at %s (set KILN_GITOPS_DIR): %v", abs, err)
	}
	return abs
}

// TestFluxBuildReference builds every Flux Kustomization kiln builds in
// the example repositories with `flux build kustomization --dry-run` of
// the Flux CLI, from the Kustomization as kiln built it (its parent's
// rendering), and compares the objects: equal as YAML objects.
//
// The one difference of inputs: flux build --dry-run reads no cluster, so
// the variables kiln read from substituteFrom ConfigMaps and Secrets are
// given to it as postBuild.substitute (under the Kustomization's own, as
// kustomize-controller merges them).
func TestFluxBuildReference(t *testing.T) {
	bin := fluxBinary(t)
	root := gitopsDir(t)
	var dirs []string
	for _, repo := range gitopsRepos {
		dirs = append(dirs, filepath.Join(root, repo))
	}
	// kiln's own fixtures: substitution (defaults, a missing variable, a
	// SOPS Secret's values), a parent patching its child.
	for _, f := range []string{"subst", "parent", "missing", "ignore"} {
		abs, err := filepath.Abs(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, abs)
	}
	total := 0
	for _, src := range dirs {
		repo := filepath.Base(src)
		t.Run(repo, func(t *testing.T) {
			// flux build writes a kustomization.yaml into --path while it
			// builds: it builds a copy.
			cp := t.TempDir()
			if err := os.CopyFS(cp, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			t.Chdir(src)
			c := &flux.Controller{}
			res := discover.Discover([]string{"."}, discover.Options{Controllers: []discover.Controller{c}})
			for _, w := range res.Warnings {
				t.Logf("kiln says: %v", w) // a source kiln cannot resolve leaves its Kustomizations unbuilt: flux build has no folder for them either
			}
			if len(c.Builds) == 0 {
				t.Fatalf("kiln built no Flux Kustomization in %s", repo)
			}
			for _, b := range c.Builds {
				total++
				compareWithFlux(t, bin, cp, b)
			}
		})
	}
	t.Logf("%d Flux Kustomizations compared with flux build %s", total, fluxVersion)
}

func compareWithFlux(t *testing.T, bin, cp string, b *flux.Build) {
	t.Helper()
	if len(b.Unit.Source.Errs) > 0 {
		t.Errorf("Kustomization %s: kiln's build failed: %v", b.Name(), b.Unit.Source.Errs)
		return
	}
	obj := withVars(b.Object, b.Vars)
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "kustomization.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rel := b.Dir
	if filepath.IsAbs(rel) {
		t.Fatalf("Kustomization %s builds %s, outside the repository", b.Name(), rel)
	}
	md, _ := b.Object["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	cmd := exec.Command(bin, "build", "kustomization", name, "-n", ns, "--path", filepath.Join(cp, rel), "--kustomization-file", file, "--dry-run")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("Kustomization %s: flux build failed: %v\n%s", b.Name(), err, stderr.String())
		return
	}
	want := decodeAll(t, stdout.Bytes())
	got := map[string]map[string]any{}
	for _, o := range b.Unit.Source.Objects {
		c, err := o.Content()
		if err != nil {
			t.Fatal(err)
		}
		got[idOf(c)] = normalize(t, c)
	}
	for _, id := range sortedKeys(want) {
		g, ok := got[id]
		switch {
		case !ok:
			t.Errorf("Kustomization %s: flux build outputs %s, kiln does not", b.Name(), id)
		case !reflect.DeepEqual(g, want[id]):
			gy, _ := yaml.Marshal(g)
			wy, _ := yaml.Marshal(want[id])
			t.Errorf("Kustomization %s: %s differs\nkiln:\n%s\nflux build:\n%s", b.Name(), id, gy, wy)
		}
	}
	for _, id := range sortedKeys(got) {
		if _, ok := want[id]; !ok {
			t.Errorf("Kustomization %s: kiln outputs %s, flux build does not", b.Name(), id)
		}
	}
	t.Logf("Kustomization %s (%s): %d objects, as flux build", b.Name(), b.Dir, len(want))
}

// withVars returns the Kustomization with the substituteFrom variables
// kiln read as postBuild.substitute, its own substitute over them.
func withVars(obj map[string]any, vars map[string]string) map[string]any {
	if len(vars) == 0 {
		return obj
	}
	out := deepCopy(obj)
	spec, _ := out["spec"].(map[string]any)
	pb, _ := spec["postBuild"].(map[string]any)
	subst, _ := pb["substitute"].(map[string]any)
	merged := map[string]any{}
	for n, v := range vars {
		merged[n] = v
	}
	for n, v := range subst {
		merged[n] = v
	}
	pb["substitute"] = merged
	return out
}

func deepCopy(m map[string]any) map[string]any {
	data, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

func normalize(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeAll(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	out := map[string]map[string]any{}
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("flux build output does not parse: %v", err)
		}
		if m == nil {
			continue
		}
		out[idOf(m)] = normalize(t, m)
	}
	return out
}

func idOf(m map[string]any) string {
	md, _ := m["metadata"].(map[string]any)
	return strings.Join([]string{str(m["apiVersion"]), str(m["kind"]), str(md["namespace"]), str(md["name"])}, "/")
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func sortedKeys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
