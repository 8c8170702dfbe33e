package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// TestImage checks the image make image builds: its configuration (uid 999,
// kiln as the entrypoint, kiln fn as the default command, the PATH the
// plugin's commands need) and that it runs kiln under the runtime found.
func TestImage(t *testing.T) {
	c := requireImage(t)
	t.Logf("runtime %s, image %s: id %s, digest %s, %s bytes", c.runtime, testImage, c.id, c.digest, c.size)
	r := runIn(t, repoRoot, c.env, c.podman, "image", "inspect", "--format", "{{json .Config}}", testImage)
	var cfg struct {
		User       string
		Entrypoint []string
		Cmd        []string
		Env        []string
		WorkingDir string
		Labels     map[string]string
	}
	if err := json.Unmarshal([]byte(r.stdout), &cfg); err != nil {
		t.Fatalf("podman image inspect: %v\n%s%s", err, r.stdout, r.stderr)
	}
	if cfg.User != "999:999" || strings.Join(cfg.Entrypoint, " ") != "/usr/local/bin/kiln" || strings.Join(cfg.Cmd, " ") != "fn" ||
		cfg.WorkingDir != "/home/argocd" || !contains(cfg.Env, "PATH=/usr/local/bin:/bin") || !contains(cfg.Env, "HOME=/home/argocd") {
		t.Errorf("image config %+v: want user 999:999, entrypoint /usr/local/bin/kiln, cmd fn, workdir and HOME /home/argocd, PATH /usr/local/bin:/bin", cfg)
	}

	r = c.run(t, testImage, "version")
	commit, err := exec.Command("git", "-C", repoRoot, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if r.code != 0 || !strings.HasPrefix(r.stdout, "kiln ") || !strings.Contains(r.stdout, "commit "+strings.TrimSpace(string(commit))) || !strings.Contains(r.stdout, "linux/amd64") {
		t.Errorf("kiln version in the image: exit %d, want the commit %s\n%s%s", r.code, commit, r.stdout, r.stderr)
	}
	if cfg.Labels["org.opencontainers.image.revision"] != strings.TrimSpace(string(commit)) {
		t.Errorf("label org.opencontainers.image.revision = %q, want %s", cfg.Labels["org.opencontainers.image.revision"], commit)
	}
	t.Logf("kiln version in the image:\n%s", r.stdout)

	// Only kiln, busybox and its applets; the root file system's programs
	// are what the Dockerfile says.
	r = c.run(t, "--entrypoint", "sh", testImage, "-c", "ls /bin /usr/local/bin; ls -ld /tmp /home/argocd; id")
	for _, want := range []string{"busybox", "find", "grep", "sh", "kiln", "drwxrwxrwt", "argocd", "uid=999(argocd) gid=999(argocd)"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("inside the image (exit %d) no %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
}

// TestImageReproducible builds the image again from the same commit and
// wants the same image ID: every timestamp is the commit's time.
func TestImageReproducible(t *testing.T) {
	c := requireImage(t)
	dir := t.TempDir()
	build := exec.Command("make", "image", "IMAGE=localhost/kiln:e2e-again", "IMAGE_DIR="+dir, "BUSYBOX="+mustLook(t, "busybox"), "IMAGE_ARCH=amd64")
	build.Dir = repoRoot
	build.Env = c.env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	r := runIn(t, repoRoot, c.env, c.podman, "image", "inspect", "--format", "{{.Id}}", "localhost/kiln:e2e-again")
	if id := strings.TrimSpace(r.stdout); id != c.id {
		t.Errorf("second build: image id %s, first %s", id, c.id)
	}
	runIn(t, repoRoot, c.env, c.podman, "rmi", "localhost/kiln:e2e-again")
}

func mustLook(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestImageLintsExamples runs kiln lint in the image on the examples,
// mounted read-only, as uid 999 with a read-only root file system: the
// result is the host binary's, and a privileged Deployment still fails.
func TestImageLintsExamples(t *testing.T) {
	c := requireImage(t)
	examples := filepath.Join(repoRoot, "examples")
	// The host judges with kiln's defaults too: the repository's .kiln.yaml
	// above examples/ is not in the container's /src.
	none := noConfig(t)
	want := runIn(t, examples, nil, kilnBin, "lint", "--config", none, "-f", "json", ".")
	r := c.run(t, "--user", "999:999", "--read-only", "-v", examples+":/src:ro", "-w", "/src", testImage, "lint", "-f", "json", ".")
	if r.code != 0 || want.code != 0 {
		t.Fatalf("kiln lint examples: exit %d in the image, %d on the host\n%s", r.code, want.code, r.stderr)
	}
	if r.stdout != want.stdout {
		t.Errorf("the image's report differs from the host's:\n%s\nhost:\n%s", r.stdout, want.stdout)
	}
	bad := writeTree(t, map[string]string{"rogue.yaml": badDeployment})
	r = c.run(t, "--user", "999:999", "--read-only", "-v", bad+":/src:ro", "-w", "/src", testImage, "lint", ".")
	if r.code != 1 || !strings.Contains(r.stdout, "psa/privileged") {
		t.Errorf("kiln lint of a privileged Deployment in the image: exit %d, want 1 with psa/privileged\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// containerFunction is a Lint functionConfig that runs the image as a KRM
// function in its container form.
func containerFunction(spec string) string {
	return strings.Replace(lintFunction(spec), "      exec:\n        path: kiln\n        args: [fn]\n", "      container:\n        image: "+testImage+"\n", 1)
}

// TestImageKRMFunction runs the image as kustomize runs a KRM function in
// its container form (kustomize build --enable-alpha-plugins: docker run
// --user nobody --network none …, here podman through a docker shim on
// PATH): kiln fn as validator and as generator.
func TestImageKRMFunction(t *testing.T) {
	c := requireImage(t)
	kustomize := requireKustomize(t)
	appContainer := strings.Replace(appFunction, "      exec:\n        path: kiln\n        args: [fn]\n", "      container:\n        image: "+testImage+"\n", 1)
	for _, tt := range []struct {
		name      string
		files     map[string]string
		fail      bool
		stderr    string
		wantKinds []string
	}{
		{"error finding stops the build", map[string]string{
			"kustomization.yaml": "resources: [good.yaml, bad.yaml]\ntransformers: [lint.yaml]\n",
			"good.yaml":          goodDeployment, "bad.yaml": badDeployment, "lint.yaml": containerFunction(""),
		}, true, "psa/privileged", nil},
		{"clean build passes unchanged", map[string]string{
			"kustomization.yaml": "resources: [good.yaml]\ntransformers: [lint.yaml]\n",
			"good.yaml":          goodDeployment, "lint.yaml": containerFunction("kubeVersion: \"1.31\""),
		}, false, "", []string{"Deployment/shop/worker"}},
		{"generator compiles an App spec", map[string]string{
			"kustomization.yaml": "generators: [app.yaml]\n",
			"app.yaml":           appContainer,
		}, false, "", []string{"Deployment/shop/web", "Service/shop/web"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			r := runIn(t, dir, c.env, kustomize, "build", "--enable-alpha-plugins", ".")
			t.Logf("kustomize build --enable-alpha-plugins (function %s) → exit %d", testImage, r.code)
			if (r.code != 0) != tt.fail {
				t.Fatalf("exit %d, want failure=%v\nstdout:\n%s\nstderr:\n%s", r.code, tt.fail, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, r.stderr)
			}
			if !tt.fail {
				if got := strings.Join(objectsOf(t, r.stdout), " "); got != strings.Join(tt.wantKinds, " ") {
					t.Errorf("objects %s, want %s", got, strings.Join(tt.wantKinds, " "))
				}
			}
		})
	}
}

// cmpRun runs a plugin.yaml command in the image as Argo CD's CMP server
// runs it in the kiln sidecar: as uid 999 with a read-only root file system
// (repo-server-patch.yaml's securityContext), in the app's directory of the
// repository the server unpacked under /tmp/_cmp_server, with the sidecar's
// environment plus the build environment, nothing else.
func (c *containers) cmpRun(t *testing.T, repo, appPath string, env []string, command []string) result {
	t.Helper()
	args := []string{"--user", "999:999", "--read-only", "-v", repo + ":/tmp/_cmp_server/repo:ro", "-w", "/tmp/_cmp_server/repo/" + appPath}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	args = append(args, "--entrypoint", command[0], testImage)
	return c.run(t, append(args, command[1:]...)...)
}

// cmpImageEnv is cmpEnv (the Argo CD build environment) with the image's
// PATH and HOME instead of the host's.
func cmpImageEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range cmpEnv(t, extra...) {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "PATH", "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TMPDIR":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "PATH=/usr/local/bin:/bin", "HOME=/home/argocd")
}

// TestArgoCDDiscoverInImage runs plugin.yaml's discover command in the
// image as the CMP server does (busybox's sh, find and grep). Argo CD's
// contract: a match is exit 0 with output on stdout; anything else is no match.
func TestArgoCDDiscoverInImage(t *testing.T) {
	c := requireImage(t)
	p := loadPlugin(t)
	const spec = "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: x}\n"
	repo := writeTree(t, map[string]string{
		"apps/shop/app.yaml":                spec,
		"apps/shop/cm.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"apps/nested/base dir/my app.yml":   "apiVersion: \"kiln.dev/v1alpha1\"\nkind: 'App' # a spec\nmetadata: {name: x}\n",
		"apps/plain/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"apps/argo/app.yaml":                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\n",
		"apps/lintconfig/lint.yaml":         "apiVersion: kiln.dev/v1alpha1\nkind: Lint\nmetadata: {name: l}\n",
		"apps/hidden/.specs/app.yaml":       spec,
		"apps/hidden/.app.yaml":             spec,
		"apps/kust/kustomization.yaml":      "resources: [app.yaml]\n",
		"apps/kust/app.yaml":                spec,
		"apps/kustyml/kustomization.yml":    "resources: [app.yaml]\n",
		"apps/kustyml/app.yaml":             spec,
		"apps/notyaml/app.json":             `{"apiVersion": "kiln.dev/v1alpha1", "kind": "App"}`,
		"apps/notyaml/README.md":            "kind: App\napiVersion: kiln.dev/v1alpha1\n",
		"apps/many/a.yaml":                  spec,
		"apps/many/b.yaml":                  spec,
		"apps/many/sub/c.yaml":              spec,
		"apps/app-in-a-list/list.yaml":      "apiVersion: v1\nkind: List\nitems: []\n",
		"apps/split/specs/shop.yaml":        "# shop\napiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: shop}\n",
		"apps/split/deploy/worker.yaml":     goodDeployment,
		"apps/spec-last-in-stream/all.yaml": goodDeployment + "---\n" + spec,
		"apps/empty/.keep":                  "",
		"apps/apiversion-only/x.yaml":       "apiVersion: kiln.dev/v1alpha1\nkind: Lint\n---\napiVersion: v1\nkind: ConfigMap\n",
		"apps/indented/x.yaml":              "items:\n  - apiVersion: kiln.dev/v1alpha1\n    kind: App\n",
		"apps/crlf/app.yaml":                "apiVersion: kiln.dev/v1alpha1\r\nkind: App\r\nmetadata: {name: x}\r\n",
	})
	for _, tt := range []struct {
		dir   string
		match bool
	}{
		{"apps/shop", true},                // an App spec next to a plain manifest
		{"apps/nested", true},              // in a subdirectory, quoted values, a comment, spaces in names
		{"apps/split", true},               // specs and plain manifests in separate directories
		{"apps/spec-last-in-stream", true}, // an App after other documents
		{"apps/many", true},                // several: the first is enough
		{"apps/crlf", true},                // Windows line endings
		{"apps/plain", false},              // plain manifests: Argo CD's own directory support
		{"apps/argo", false},               // kind: Application is not kind: App
		{"apps/lintconfig", false},         // kiln.dev, but not an App
		{"apps/apiversion-only", false},    // kiln.dev in one document, no App anywhere
		{"apps/indented", false},           // not a top-level document
		{"apps/hidden", false},             // hidden files: generate does not read them either
		{"apps/kust", false},               // kustomize: use kiln fn from kustomize instead
		{"apps/kustyml", false},
		{"apps/notyaml", false},
		{"apps/empty", false},
	} {
		r := c.cmpRun(t, repo, tt.dir, cmpImageEnv(t), p.Spec.Discover.Find.Command)
		matched := r.code == 0 && strings.TrimSpace(r.stdout) != ""
		if matched != tt.match {
			t.Errorf("discover in %s: exit %d stdout %q stderr %q, want match=%v", tt.dir, r.code, r.stdout, r.stderr, tt.match)
		}
		if r.stderr != "" {
			t.Errorf("discover in %s wrote to stderr (an error in the command?): %q", tt.dir, r.stderr)
		}
		if r.code != 0 {
			t.Errorf("discover in %s: exit %d; no match must be exit 0 with no output, not an error in the CMP log", tt.dir, r.code)
		}
	}
}

// TestArgoCDGenerateInImage runs plugin.yaml's generate command in the
// image with the environment Argo CD's CMP server sets for an Application
// with plugin parameters: ARGOCD_APP_PARAMETERS (JSON) and the PARAM_*
// variables, ARGOCD_ENV_* for spec.source.plugin.env, the ARGOCD_APP_* build
// environment, KUBE_VERSION and KUBE_API_VERSIONS. The compiled objects come
// with their sync waves.
func TestArgoCDGenerateInImage(t *testing.T) {
	c := requireImage(t)
	p := loadPlugin(t)
	repo, _ := argoRepo(t, nil)
	params, _ := json.Marshal([]map[string]any{
		{"name": "fail-on", "string": "error"},
		{"name": "psa-version", "string": "v1.31"},
		{"name": "policies", "array": []string{}},
	})
	env := cmpImageEnv(t, "ARGOCD_ENV_KILN_PSA_LEVEL=restricted", "ARGOCD_APP_PARAMETERS="+string(params),
		"PARAM_FAIL_ON=error", "PARAM_PSA_VERSION=v1.31")
	r := c.cmpRun(t, repo, "apps/shop", env, append(p.Spec.Generate.Command, p.Spec.Generate.Args...))
	if r.code != 0 {
		t.Fatalf("generate: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	objs, errs := manifest.Parse("stdout", []byte(r.stdout))
	if len(errs) > 0 || len(objs) != 3 {
		t.Fatalf("stdout is not the app's three objects (%v):\n%s", errs, r.stdout)
	}
	waves := map[string]string{}
	for _, o := range objs {
		waves[o.Kind+"/"+o.Name] = o.Annotations["argocd.argoproj.io/sync-wave"]
	}
	if want := map[string]string{"ConfigMap/settings": "", "Service/web": "-1", "Deployment/web": "0"}; !equalMaps(waves, want) {
		t.Errorf("sync waves %v, want %v (compiled objects only)", waves, want)
	}
	// A finding fails the sync: exit 1, nothing on stdout.
	writeFiles(t, filepath.Join(repo, "apps/shop"), map[string]string{"rogue.yaml": badDeployment})
	r = c.cmpRun(t, repo, "apps/shop", env, p.Spec.Generate.Command)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "psa/privileged") {
		t.Errorf("generate with a privileged Deployment: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if err := os.Remove(filepath.Join(repo, "apps/shop/rogue.yaml")); err != nil {
		t.Fatal(err)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
