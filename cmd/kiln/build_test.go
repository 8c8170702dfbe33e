package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
)

// exampleDirs lists the compiler's examples: an app.yaml with its compiled output in out/.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, n := range []string{"mesh", "model-server", "psa-migration", "pytorch", "storefront", "tensorflow", "web"} {
		dirs = append(dirs, filepath.Join("..", "..", "examples", n))
	}
	return dirs
}

// TestBuildExamples checks that the compiled output checked in under
// examples/*/out is what kiln build writes (go test -update rewrites it),
// and that it lints clean.
func TestBuildExamples(t *testing.T) {
	for _, dir := range exampleDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			args := []string{"build", filepath.Join(dir, "app.yaml"), "-o", filepath.Join(dir, "out")}
			if !*golden.Update {
				args = append(args, "--check")
			}
			if code, stdout, stderr := runKiln(t, "", args...); code != 0 || stdout != "" {
				t.Fatalf("kiln %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
			}
			code, stdout, stderr := runKiln(t, "", "lint", filepath.Join(dir, "out"))
			if code != 0 || !strings.Contains(stdout, "0 errors, 0 warnings, 0 infos") {
				t.Errorf("lint of %s/out: exit %d\n%s%s", dir, code, stdout, stderr)
			}
			code, stdout, stderr = runKiln(t, "", "lint", filepath.Join(dir, "app.yaml"))
			if code != 0 || !strings.Contains(stdout, "0 errors, 0 warnings, 0 infos") {
				t.Errorf("lint of %s/app.yaml: exit %d\n%s%s", dir, code, stdout, stderr)
			}
		})
	}
}

// TestBuildDeterministic builds every example twice and from another working
// directory (relative paths), and wants byte-identical streams.
func TestBuildDeterministic(t *testing.T) {
	dirs := exampleDirs(t)
	var args []string
	for _, d := range dirs {
		args = append(args, filepath.Join(d, "app.yaml"))
	}
	build := func(paths []string) string {
		code, stdout, stderr := runKiln(t, "", append([]string{"build"}, paths...)...)
		if code != 0 {
			t.Fatalf("build: exit %d: %s", code, stderr)
		}
		return stdout
	}
	first, second := build(args), build(args)
	if first != second || first == "" {
		t.Fatal("two builds differ")
	}
	abs, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(abs)
	var rel []string
	for _, d := range dirs {
		rel = append(rel, filepath.Join(filepath.Base(d), "app.yaml"))
	}
	if got := build(rel); got != first {
		t.Error("build from examples/ with relative paths differs from the build from cmd/kiln")
	}
}

// TestBuildBadSpecs: each bad spec exits 2 with file:line on stderr, prints
// nothing and writes nothing.
func TestBuildBadSpecs(t *testing.T) {
	head := "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n"
	svc := head + "  services:\n    web:\n"
	ctr := "      containers:\n        - name: app\n          image: nginx\n"
	train := func(name, extra string) string {
		return head + "  training:\n    " + name + ":\n      framework: pytorch\n" + extra + "      image: train\n      command: [python, train.py]\n"
	}
	tests := []struct {
		name, spec string
		line       int
		msg        string
	}{
		{"unknown field", svc + "      replica: 3\n" + ctr, 7, `unknown field "replica"`},
		{"wrong type", svc + "      replicas: three\n" + ctr, 7, "replicas must be a whole number"},
		{"unknown volume in mounts", svc + ctr + "          mounts: {cache: /cache}\n", 10, `volume "cache"`},
		{"nodes: 0", train("pt", "      nodes: 0\n"), 8, "spec.training.pt.nodes is 0; it must be at least 1"},
		{"duplicate container names", svc + "      init:\n        - {name: app, image: busybox}\n" + ctr, 10, `container name "app" is already used`},
		{"sidecars with target 1.28", head + "  target: {kubernetes: \"1.28\"}\n  services:\n    web:\n      sidecars:\n        - {name: envoy, image: envoy}\n" + ctr, 8, "Kubernetes 1.29"},
		{"over-long JobSet name", train(strings.Repeat("a", 60), ""), 6, "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"app.yaml": tt.spec})
			spec := filepath.Join(dir, "app.yaml")
			out := filepath.Join(dir, "out")
			for _, args := range [][]string{{"build", spec}, {"build", spec, "-o", out}, {"build", spec, "-o", out, "--check"}, {"lint", spec}} {
				code, stdout, stderr := runKiln(t, "", args...)
				want := spec + ":" + strconv.Itoa(tt.line) + ":"
				if code != exitInput || !strings.Contains(stderr, want) || !strings.Contains(stderr, tt.msg) {
					t.Errorf("kiln %s: exit %d, stderr:\n%s\nwant exit 2 and %q, %q", args[0], code, stderr, want, tt.msg)
				}
				if args[0] == "build" && stdout != "" {
					t.Errorf("kiln build printed to stdout: %s", stdout)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("kiln %s created %s", strings.Join(args, " "), out)
				}
			}
		})
	}
}

// listFiles returns the files under dir, relative, sorted.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

const twoServices = `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: shop, namespace: shop}
spec:
  services:
    web:
      ports: {http: 8080}
      containers: [{name: app, image: nginx}]
    worker:
      containers: [{name: app, image: worker}]
`

// TestBuildOutputDir covers -o: one file per object, atomic writes that
// leave no temporary files, removal of stale files kiln wrote (never of
// user files), and --check.
func TestBuildOutputDir(t *testing.T) {
	dir := writeFiles(t, map[string]string{"app.yaml": twoServices, "out/README.md": "mine\n", "out/shop/notes.yaml": "# mine\n"})
	spec, out := filepath.Join(dir, "app.yaml"), filepath.Join(dir, "out")
	build := func(extra ...string) (int, string) {
		code, stdout, stderr := runKiln(t, "", append([]string{"build", spec, "-o", out}, extra...)...)
		if stdout != "" {
			t.Errorf("build -o printed to stdout: %s", stdout)
		}
		return code, stderr
	}
	if code, stderr := build(); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	want := []string{".kiln-build", "README.md", "shop/deployment-web.yaml", "shop/deployment-worker.yaml", "shop/notes.yaml", "shop/service-web.yaml"}
	if got := listFiles(t, out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("files:\n got %v\nwant %v", got, want)
	}
	_, stream, _ := runKiln(t, "", "build", spec)
	var joined []string
	for _, f := range []string{"shop/service-web.yaml", "shop/deployment-web.yaml", "shop/deployment-worker.yaml"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		joined = append(joined, string(b))
	}
	if strings.Join(joined, "---\n") != stream {
		t.Errorf("files do not hold the stream's objects:\n%s\nvs\n%s", strings.Join(joined, "---\n"), stream)
	}
	if code, stderr := build("--check"); code != 0 {
		t.Errorf("--check on fresh output: exit %d: %s", code, stderr)
	}

	// Out of date: a stale file, a missing one, an extra one (worker dropped from the spec).
	os.WriteFile(filepath.Join(out, "shop/deployment-web.yaml"), []byte("edited\n"), 0o644)
	os.Remove(filepath.Join(out, "shop/service-web.yaml"))
	os.WriteFile(spec, []byte(strings.Replace(twoServices, "    worker:\n      containers: [{name: app, image: worker}]\n", "", 1)), 0o644)
	before := listFiles(t, out)
	code, stderr := build("--check")
	if code != exitFindings {
		t.Errorf("--check on stale output: exit %d, want 1", code)
	}
	for _, w := range []string{"1 stale, 1 missing, 1 extra", "stale    " + filepath.Join(out, "shop/deployment-web.yaml"), "missing  " + filepath.Join(out, "shop/service-web.yaml"), "extra    " + filepath.Join(out, "shop/deployment-worker.yaml")} {
		if !strings.Contains(stderr, w) {
			t.Errorf("--check summary lacks %q:\n%s", w, stderr)
		}
	}
	if after := listFiles(t, out); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("--check changed the directory: %v → %v", before, after)
	}

	if code, stderr := build(); code != 0 {
		t.Fatalf("rebuild: exit %d: %s", code, stderr)
	}
	want = []string{".kiln-build", "README.md", "shop/deployment-web.yaml", "shop/notes.yaml", "shop/service-web.yaml"}
	if got := listFiles(t, out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after rebuild, files:\n got %v\nwant %v (stale worker removed, user files kept, no temp files)", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "README.md")); string(b) != "mine\n" {
		t.Error("user file changed")
	}
	if code, stderr := build("--check"); code != 0 {
		t.Errorf("--check after rebuild: exit %d: %s", code, stderr)
	}
}

// TestBuildManifestOutsideDir: entries of .kiln-build that point outside the
// output directory are ignored, never deleted.
func TestBuildManifestOutsideDir(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"app.yaml":         twoServices,
		"victim.yaml":      "keep\n",
		"out/.kiln-build":  "../victim.yaml\n/etc/passwd\nshop/../../victim.yaml\n",
		"other/keep.yaml":  "keep\n",
		"out/shop/x.yaml~": "keep\n",
	})
	code, _, stderr := runKiln(t, "", "build", filepath.Join(dir, "app.yaml"), "-o", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "victim.yaml")); err != nil {
		t.Errorf("a file outside the output directory was removed: %v", err)
	}
}

const unsafeSpec = `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: shop, namespace: shop}
spec:
  services:
    web:
      security: {runAsNonRoot: false}
      containers: [{name: app, image: nginx}]
`

// TestBuildRefusesLintErrors: error findings on the compiled objects stop the
// build (exit 1, nothing printed or written) and point at the spec line;
// --no-lint builds anyway.
func TestBuildRefusesLintErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"app.yaml": unsafeSpec})
	spec, out := filepath.Join(dir, "app.yaml"), filepath.Join(dir, "out")
	for _, args := range [][]string{{"build", spec}, {"build", spec, "-o", out}} {
		code, stdout, stderr := runKiln(t, "", args...)
		if code != exitFindings || stdout != "" {
			t.Errorf("kiln %v: exit %d, stdout %q; want 1 and nothing", args, code, stdout)
		}
		if !strings.Contains(stderr, spec+":7:") || !strings.Contains(stderr, "psa/runAsNonRoot") {
			t.Errorf("stderr does not name the spec line and rule:\n%s", stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("refused build created %s", out)
		}
	}
	code, stdout, stderr := runKiln(t, "", "build", "--no-lint", spec)
	if code != 0 || !strings.Contains(stdout, "runAsNonRoot: false") {
		t.Errorf("--no-lint: exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, _ = runKiln(t, "", "lint", spec)
	if code != exitFindings || !strings.Contains(stdout, spec+":7:") {
		t.Errorf("lint of the spec: exit %d, want 1 with a finding at %s:7:\n%s", code, spec, stdout)
	}
}

// TestBuildUsage covers usage errors.
func TestBuildUsage(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cm.yaml": goodConfigMap, "app.yaml": twoServices, "app2.yaml": twoServices})
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"build", "--check", filepath.Join(dir, "app.yaml")}, "--check needs -o DIR"},
		{[]string{"build", filepath.Join(dir, "cm.yaml")}, "no App specs"},
		{[]string{"build", filepath.Join(dir, "app.yaml"), filepath.Join(dir, "app2.yaml")}, "is also produced by"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runKiln(t, "", tt.args...)
		if code != exitInput || stdout != "" || !strings.Contains(stderr, tt.msg) {
			t.Errorf("kiln %v: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, stdout, stderr, tt.msg)
		}
	}
}

// TestBuildHeaderTypoKeepsOutput: a spec whose header has a typo is an input
// error (exit 2), and build -o then changes nothing in the output directory,
// which still holds that app's files from the last good build.
func TestBuildHeaderTypoKeepsOutput(t *testing.T) {
	other := strings.Replace(twoServices, "name: shop, namespace: shop", "name: blog, namespace: blog", 1)
	for _, tt := range []struct{ name, from, to, msg string }{
		{"apiVersion v1alpha2", "apiVersion: kiln.dev/v1alpha1", "apiVersion: kiln.dev/v1alpha2", `apiVersion "kiln.dev/v1alpha2" is not an App spec version kiln knows`},
		{"group typo", "apiVersion: kiln.dev/v1alpha1", "apiVersion: kiln.de/v1alpha1", `apiVersion "kiln.de/v1alpha1" is not an App spec version`},
		{"kind typo", "kind: App", "kind: Ap", `kind "Ap" is not a kind kiln knows`},
		{"App of another group", "apiVersion: kiln.dev/v1alpha1", "apiVersion: example.com/v1", "is not a kiln App spec"},
		{"not a valid spec", "    worker:\n", "    worker:\n      replicas: many\n", "replicas must be"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"specs/shop.yaml": twoServices, "specs/blog.yaml": other})
			specs, out := filepath.Join(dir, "specs"), filepath.Join(dir, "out")
			if code, _, stderr := runKiln(t, "", "build", specs, "-o", out); code != 0 {
				t.Fatalf("first build: exit %d: %s", code, stderr)
			}
			before := snapshotOf(t, out)
			bad := strings.Replace(twoServices, tt.from, tt.to, 1)
			if bad == twoServices {
				t.Fatal("replacement did not apply")
			}
			os.WriteFile(filepath.Join(specs, "shop.yaml"), []byte(bad), 0o644)
			code, _, stderr := runKiln(t, "", "build", specs, "-o", out)
			if code != exitInput || !strings.Contains(stderr, tt.msg) || !strings.Contains(stderr, "shop.yaml:") {
				t.Errorf("build with %s: exit %d, stderr %s; want exit 2 and %q", tt.name, code, stderr, tt.msg)
			}
			if after := snapshotOf(t, out); !reflect.DeepEqual(before, after) {
				t.Errorf("build with a bad spec changed %s", out)
			}
		})
	}
}

// TestBuildLeftoverTemps: temporary files a killed build left next to kiln's
// files are reported by --check and removed by the next build; look-alikes
// next to files kiln does not write are left alone.
func TestBuildLeftoverTemps(t *testing.T) {
	dir := writeFiles(t, map[string]string{"app.yaml": twoServices})
	spec, out := filepath.Join(dir, "app.yaml"), filepath.Join(dir, "out")
	if code, _, stderr := runKiln(t, "", "build", spec, "-o", out); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"shop/.deployment-web.yaml.123456.tmp", "..kiln-build.99.tmp", "shop/.notes.yaml.1.tmp"} {
		os.WriteFile(filepath.Join(out, f), []byte("partial"), 0o644)
	}
	code, _, stderr := runKiln(t, "", "build", spec, "-o", out, "--check")
	if code != exitFindings || !strings.Contains(stderr, "2 leftover") || !strings.Contains(stderr, "leftover "+filepath.Join(out, "shop/.deployment-web.yaml.123456.tmp")) {
		t.Errorf("--check with leftovers: exit %d, stderr %s", code, stderr)
	}
	if code, _, stderr := runKiln(t, "", "build", spec, "-o", out); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	want := []string{".kiln-build", "shop/.notes.yaml.1.tmp", "shop/deployment-web.yaml", "shop/deployment-worker.yaml", "shop/service-web.yaml"}
	if got := listFiles(t, out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after build: %v, want %v", got, want)
	}
	if code, _, stderr := runKiln(t, "", "build", spec, "-o", out, "--check"); code != 0 {
		t.Errorf("--check after cleanup: exit %d: %s", code, stderr)
	}
}

// TestBuildWarningsAndFailOn: compiler warnings go to stderr and do not stop
// the build by default; --fail-on warning stops it and writes nothing.
func TestBuildWarningsAndFailOn(t *testing.T) {
	spec := `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: shop, namespace: shop}
spec:
  volumes:
    data: {shared: {size: 1Gi, accessMode: ReadWriteOnce}}
  services:
    web:
      replicas: 3
      security: {runAsUser: 1000}
      containers: [{name: app, image: nginx, mounts: {data: /data}}]
`
	dir := writeFiles(t, map[string]string{"app.yaml": spec})
	p, out := filepath.Join(dir, "app.yaml"), filepath.Join(dir, "out")
	code, stdout, stderr := runKiln(t, "", "build", p)
	if code != 0 || stdout == "" || !strings.Contains(stderr, p+":11:") || !strings.Contains(stderr, "warning: volume \"data\" is ReadWriteOnce but service \"web\" has 3 replicas") {
		t.Errorf("build: exit %d, stderr %s", code, stderr)
	}
	code, stdout, stderr = runKiln(t, "", "build", p, "-o", out, "--fail-on", "warning")
	if code != exitFindings || stdout != "" || !strings.Contains(stderr, "build refused") {
		t.Errorf("build --fail-on warning: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("build --fail-on warning wrote %s", out)
	}
	if code, _, stderr := runKiln(t, "", "build", p, "--fail-on", "sometimes"); code != exitInput {
		t.Errorf("bad --fail-on: exit %d: %s", code, stderr)
	}
}

// TestBuildDirWithConfigFiles: the files a spec reads into ConfigMaps are not
// read as manifests when the whole directory is built.
func TestBuildDirWithConfigFiles(t *testing.T) {
	code, stdout, stderr := runKiln(t, "", "build", filepath.Join("..", "..", "examples", "web"))
	if code != 0 || !strings.Contains(stdout, "kind: ConfigMap") || !strings.Contains(stdout, "envoy.yaml: |") {
		t.Errorf("build examples/web: exit %d\nstderr: %s", code, stderr)
	}
}
