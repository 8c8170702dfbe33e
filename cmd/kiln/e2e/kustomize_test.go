package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// kustomizeVersion is the kustomize .ci/run installs.
const kustomizeVersion = "v5.8.1"

func requireKustomize(t *testing.T) string {
	t.Helper()
	// Prefer the one `go install` put in GOBIN/GOPATH/bin: that is the pinned version.
	p := filepath.Join(goBinDir(t), "kustomize")
	if _, err := os.Stat(p); err != nil {
		p = requireTool(t, "kustomize")
	}
	r := runIn(t, t.TempDir(), nil, p, "version")
	if !strings.Contains(r.stdout, kustomizeVersion) {
		if inCI() {
			t.Fatalf("kustomize version %q, want %s", strings.TrimSpace(r.stdout), kustomizeVersion)
		}
		t.Logf("kustomize version %q, not %s", strings.TrimSpace(r.stdout), kustomizeVersion)
	}
	return p
}

// kustomizeBuild runs kustomize build with exec functions enabled and kiln on PATH.
func kustomizeBuild(t *testing.T, kustomize, dir string) result {
	t.Helper()
	return runIn(t, dir, nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
}

// objectsOf parses a kustomize build output into kind/namespace/name strings, sorted.
func objectsOf(t *testing.T, out string) []string {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	var ids []string
	for _, n := range nodes {
		ids = append(ids, n.GetKind()+"/"+n.GetNamespace()+"/"+n.GetName())
	}
	sort.Strings(ids)
	return ids
}

// lintFunction is a Lint functionConfig that runs kiln fn by exec.
func lintFunction(spec string) string {
	s := `apiVersion: kiln.dev/v1alpha1
kind: Lint
metadata:
  name: kiln-lint
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: kiln
        args: [fn]
`
	if spec != "" {
		s += "spec:\n"
		for _, l := range strings.Split(strings.TrimSpace(spec), "\n") {
			s += "  " + l + "\n"
		}
	}
	return s
}

// appFunction is appSpec as a generator's functionConfig.
var appFunction = strings.Replace(appSpec, "  namespace: shop\n", `  namespace: shop
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: kiln
        args: [fn]
`, 1)

func TestKustomizeValidator(t *testing.T) {
	kustomize := requireKustomize(t)
	tests := []struct {
		name      string
		field     string // validators or transformers
		resources map[string]string
		spec      string
		fail      bool
		stderr    []string
		notStderr []string
	}{
		{name: "error finding stops the build (validators)", field: "validators",
			resources: map[string]string{"good.yaml": goodDeployment, "bad.yaml": badDeployment}, fail: true,
			stderr: []string{"[error] apps/v1/Deployment/shop/rogue spec.template.spec.containers[0].securityContext.privileged: psa/privileged"}},
		{name: "error finding stops the build (transformers)", field: "transformers",
			resources: map[string]string{"good.yaml": goodDeployment, "bad.yaml": badDeployment}, fail: true,
			stderr: []string{"psa/privileged"}},
		{name: "clean build passes unchanged", field: "transformers",
			resources: map[string]string{"good.yaml": goodDeployment}},
		{name: "failOn never lets errors through", field: "transformers", spec: "failOn: never",
			resources: map[string]string{"bad.yaml": badDeployment}, stderr: []string{"[error]", "psa/privileged"}},
		{name: "warnings are printed, do not fail", field: "transformers",
			resources: map[string]string{"lab.yaml": warnedPod}, stderr: []string{"[warning] v1/Pod/lab/experiment"}},
		{name: "warnings fail with failOn warning", field: "transformers", spec: "failOn: warning",
			resources: map[string]string{"lab.yaml": warnedPod}, fail: true, stderr: []string{"[warning]"}},
		// kustomize (v5.8.1 too) adds path annotations to whatever a function
		// returns and then rejects any validator under validators: (kustomize
		// issue #5036): a clean build fails with kustomize's message while kiln
		// reports nothing. If kustomize fixes it, this case fails: update
		// examples/kustomize and the docs to use validators:.
		{name: "clean build under validators: hits kustomize issue 5036", field: "validators",
			resources: map[string]string{"good.yaml": goodDeployment}, fail: true,
			stderr: []string{"validator shouldn't modify the resource map"}, notStderr: []string{"[error]", "[warning]"}},
		{name: "psaLevel from the functionConfig", field: "transformers", spec: "psaLevel: privileged\nkubeVersion: \"1.31\"",
			resources: map[string]string{"bad.yaml": strings.Replace(badDeployment, "privileged: true", "runAsUser: 0", 1)}, fail: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for n := range tt.resources {
				names = append(names, n)
			}
			sort.Strings(names)
			files := map[string]string{"lint.yaml": lintFunction(tt.spec)}
			for n, c := range tt.resources {
				files[n] = c
			}
			files["kustomization.yaml"] = "resources: [" + strings.Join(names, ", ") + "]\n" + tt.field + ": [lint.yaml]\n"
			dir := writeTree(t, files)
			r := kustomizeBuild(t, kustomize, dir)
			if (r.code != 0) != tt.fail {
				t.Fatalf("kustomize build exit %d, want failure=%v\nstderr:\n%s\nstdout:\n%s", r.code, tt.fail, r.stderr, r.stdout)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			for _, s := range tt.notStderr {
				if strings.Contains(r.stderr, s) {
					t.Errorf("stderr has %q:\n%s", s, r.stderr)
				}
			}
			if tt.fail {
				if strings.Contains(r.stdout, "kind:") {
					t.Errorf("a failed build printed objects:\n%s", r.stdout)
				}
				return
			}
			// The objects are exactly what kustomize builds without kiln.
			if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: ["+strings.Join(names, ", ")+"]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			plain := kustomizeBuild(t, kustomize, dir)
			if plain.code != 0 {
				t.Fatalf("plain build: %s", plain.stderr)
			}
			if r.stdout != plain.stdout {
				t.Errorf("kiln changed the objects:\n--- with kiln ---\n%s\n--- without ---\n%s", r.stdout, plain.stdout)
			}
		})
	}
}

func TestKustomizeGenerator(t *testing.T) {
	kustomize := requireKustomize(t)
	dir := writeTree(t, map[string]string{
		"app.yaml":           appFunction,
		"good.yaml":          goodDeployment,
		"kustomization.yaml": "resources: [good.yaml]\ngenerators: [app.yaml]\n",
	})
	r := kustomizeBuild(t, kustomize, dir)
	if r.code != 0 {
		t.Fatalf("kustomize build exit %d\n%s", r.code, r.stderr)
	}
	got := strings.Join(objectsOf(t, r.stdout), " ")
	if want := "Deployment/shop/web Deployment/shop/worker Service/shop/web"; got != want {
		t.Errorf("objects %q, want %q\n%s", got, want, r.stdout)
	}
	if strings.Contains(r.stdout, "kiln.dev/v1alpha1") || strings.Contains(r.stdout, "config.kubernetes.io/function") {
		t.Errorf("the App or its function annotation leaked into the output:\n%s", r.stdout)
	}
	// The generated objects are those kiln build makes from the same spec.
	spec := writeTree(t, map[string]string{"app.yaml": appSpec})
	b := runIn(t, spec, nil, kilnBin, "build", "app.yaml")
	if b.code != 0 {
		t.Fatalf("kiln build: %s", b.stderr)
	}
	built := strings.Join(objectsOf(t, b.stdout), " ")
	if built != "Deployment/shop/web Service/shop/web" {
		t.Errorf("kiln build made %q", built)
	}
}

// TestKustomizeExample builds examples/kustomize as its comments say.
func TestKustomizeExample(t *testing.T) {
	kustomize := requireKustomize(t)
	dir := filepath.Join(repoRoot, "examples", "kustomize")
	r := kustomizeBuild(t, kustomize, dir)
	if r.code != 0 {
		t.Fatalf("kustomize build examples/kustomize: exit %d\n%s", r.code, r.stderr)
	}
	got := strings.Join(objectsOf(t, r.stdout), " ")
	if want := "Deployment/shop/storefront Deployment/shop/worker Service/shop/storefront"; got != want {
		t.Errorf("objects %q, want %q", got, want)
	}
	if r.stderr != "" {
		t.Errorf("a clean example should print nothing on stderr:\n%s", r.stderr)
	}
	// Break the example: the validator must stop the build.
	tmp := t.TempDir()
	for _, f := range []string{"kustomization.yaml", "app.yaml", "lint.yaml", "worker.yaml"} {
		writeFiles(t, tmp, map[string]string{f: readFile(t, filepath.Join(dir, f))})
	}
	writeFiles(t, tmp, map[string]string{"worker.yaml": strings.Replace(readFile(t, filepath.Join(dir, "worker.yaml")),
		"allowPrivilegeEscalation: false", "allowPrivilegeEscalation: false\n            privileged: true", 1)})
	r = kustomizeBuild(t, kustomize, tmp)
	if r.code == 0 || !strings.Contains(r.stderr, "psa/privileged") {
		t.Errorf("broken example: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
