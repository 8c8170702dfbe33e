package e2e

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// dockerfile is what the tests read from the repository's Dockerfile.
type dockerfile struct {
	lines   []string // instructions, continuation lines joined
	applets []string // ARG APPLETS: the busybox applets the image links
}

func loadDockerfile(t *testing.T) dockerfile {
	t.Helper()
	var d dockerfile
	sc := bufio.NewScanner(strings.NewReader(readFile(t, filepath.Join(repoRoot, "Dockerfile"))))
	var cur string
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if cur == "" && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			cur += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		d.lines = append(d.lines, cur+l)
		cur = ""
	}
	for _, l := range d.lines {
		if m := regexp.MustCompile(`^ARG APPLETS="([^"]*)"$`).FindStringSubmatch(l); m != nil {
			d.applets = strings.Fields(m[1])
		}
	}
	if len(d.applets) == 0 {
		t.Fatal(`Dockerfile has no ARG APPLETS="…" line`)
	}
	return d
}

// finalStage is the instructions from the last FROM on.
func (d dockerfile) finalStage() []string {
	last := 0
	for i, l := range d.lines {
		if strings.HasPrefix(l, "FROM ") {
			last = i
		}
	}
	return d.lines[last:]
}

// TestImageDefinition checks the Dockerfile describes the image the tests
// below rebuild: a scratch image holding Debian's static busybox with the
// APPLETS links, kiln built static at /usr/local/bin/kiln, plugin.yaml where
// the CMP server reads it, PATH on those two directories, uid 999, and
// kiln fn as the default command (the KRM function's container form).
func TestImageDefinition(t *testing.T) {
	d := loadDockerfile(t)
	all := strings.Join(d.lines, "\n")
	for _, want := range []string{
		"apt-get install -y --no-install-recommends busybox-static",
		"cp /bin/busybox /rootfs/bin/busybox",
		"for a in $APPLETS; do ln -s busybox /rootfs/bin/$a; done",
		"CGO_ENABLED=0",
		"-trimpath",
		"-s -w",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	final := strings.Join(d.finalStage(), "\n")
	for _, want := range []string{
		"FROM scratch",
		"COPY --from=tools /rootfs/ /",
		"COPY --from=build /out/kiln /usr/local/bin/kiln",
		"COPY examples/argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml",
		"ENV PATH=/usr/local/bin:/bin",
		"USER 999:999",
		`ENTRYPOINT ["/usr/local/bin/kiln"]`,
		`CMD ["fn"]`,
	} {
		if !strings.Contains(final, want) {
			t.Errorf("the Dockerfile's final stage lacks %q:\n%s", want, final)
		}
	}
	// Every program the discover command runs is an applet of the image.
	have := map[string]bool{}
	for _, a := range d.applets {
		have[a] = true
	}
	p := loadPlugin(t)
	if !have[p.Spec.Discover.Find.Command[0]] {
		t.Errorf("discover runs %q, which the image lacks (APPLETS %v)", p.Spec.Discover.Find.Command[0], d.applets)
	}
	script := strings.Join(p.Spec.Discover.Find.Command[1:], " ")
	for _, prog := range []string{"find", "grep", "xargs", "head", "sed", "awk", "cut", "sort", "tr"} {
		if regexp.MustCompile(`(^|[\s|;&(])`+prog+`(\s|$)`).MatchString(script) && !have[prog] {
			t.Errorf("discover runs %s, which the image lacks (APPLETS %v)", prog, d.applets)
		}
	}
}

// image is the image's root file system rebuilt as the Dockerfile builds it,
// from the same Debian package (busybox-static) and make build's kiln.
type image struct {
	root string
	run  func(env []string, dir, name string, args ...string) result
}

// imageEnv is the image's own environment (ENV in the Dockerfile).
var imageEnv = []string{"PATH=/usr/local/bin:/bin", "HOME=/home/argocd"}

func buildImage(t *testing.T) image {
	t.Helper()
	d := loadDockerfile(t)
	kiln := staticKiln(t)
	bb := requireTool(t, "busybox")
	if !isStaticELF(bb) {
		// In CI this must be the image's busybox: Debian's busybox-static.
		if inCI() {
			t.Fatalf("%s is not statically linked; install Debian's busybox-static (apt-get install busybox-static)", bb)
		}
		t.Skipf("%s is not statically linked; install Debian's busybox-static (apt-get install busybox-static), as the image does", bb)
	}
	root := t.TempDir()
	copyFile(t, bb, filepath.Join(root, "bin", "busybox"), 0o755)
	for _, a := range d.applets {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", a)); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, kiln, filepath.Join(root, "usr", "local", "bin", "kiln"), 0o755)
	copyFile(t, filepath.Join(repoRoot, "examples/argocd/plugin.yaml"), filepath.Join(root, "home/argocd/cmp-server/config/plugin.yaml"), 0o644)
	for _, dir := range []string{"tmp", "home/argocd"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A container runtime gives every container /dev/null; so does this
	// root when the test may create device nodes.
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(root, "dev/null"), syscall.S_IFCHR|0o666, 1<<8|3 /* makedev(1, 3) */); err != nil {
		t.Logf("no /dev/null in the image root: %v", err)
	} else if err := os.Chmod(filepath.Join(root, "dev/null"), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Logf("image root %s: busybox %s, applets %v, kiln from make build", root, bb, d.applets)
	return image{root: root, run: cleanRunner(t, root)}
}

func isStaticELF(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// TestArgoCDDiscoverInImage runs plugin.yaml's discover command as Argo
// CD's CMP server does (in the app directory, with the sidecar's
// environment) inside the image: busybox's sh, find and grep. Argo CD's
// contract: a match is exit 0 with output on stdout; anything else is no match.
func TestArgoCDDiscoverInImage(t *testing.T) {
	img := buildImage(t)
	p := loadPlugin(t)
	const spec = "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: x}\n"
	writeFiles(t, filepath.Join(img.root, "tmp/repo"), map[string]string{
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
		r := img.run(cmpImageEnv(t), "/tmp/repo/"+tt.dir, p.Spec.Discover.Find.Command[0], p.Spec.Discover.Find.Command[1:]...)
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

// cmpImageEnv is cmpEnv (the Argo CD build environment) with the image's
// PATH and HOME instead of the host's.
func cmpImageEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range cmpEnv(t, extra...) {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, imageEnv...)
}

// TestArgoCDGenerateInImage runs plugin.yaml's generate command in the
// image with the environment Argo CD's CMP server sets for an Application
// with plugin parameters: ARGOCD_APP_PARAMETERS (JSON) and the PARAM_*
// variables, ARGOCD_ENV_* for spec.source.plugin.env, the ARGOCD_APP_* build
// environment, KUBE_VERSION and KUBE_API_VERSIONS.
func TestArgoCDGenerateInImage(t *testing.T) {
	img := buildImage(t)
	p := loadPlugin(t)
	_, app := argoRepo(t, nil)
	if err := os.CopyFS(filepath.Join(img.root, "tmp/repo/apps/shop"), os.DirFS(app)); err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal([]map[string]any{
		{"name": "fail-on", "string": "error"},
		{"name": "psa-version", "string": "v1.31"},
		{"name": "policies", "array": []string{}},
	})
	env := cmpImageEnv(t, "ARGOCD_ENV_KILN_PSA_LEVEL=restricted", "ARGOCD_APP_PARAMETERS="+string(params),
		"PARAM_FAIL_ON=error", "PARAM_PSA_VERSION=v1.31")
	r := img.run(env, "/tmp/repo/apps/shop", p.Spec.Generate.Command[0], append(p.Spec.Generate.Command[1:], p.Spec.Generate.Args...)...)
	if r.code != 0 {
		t.Fatalf("generate: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	objs, errs := manifest.Parse("stdout", []byte(r.stdout))
	if len(errs) > 0 || len(objs) != 3 {
		t.Fatalf("stdout is not the app's three objects (%v):\n%s", errs, r.stdout)
	}
	// A finding fails the sync: exit 1, nothing on stdout.
	writeFiles(t, filepath.Join(img.root, "tmp/repo/apps/shop"), map[string]string{"rogue.yaml": badDeployment})
	r = img.run(env, "/tmp/repo/apps/shop", p.Spec.Generate.Command[0], p.Spec.Generate.Command[1:]...)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "psa/privileged") {
		t.Errorf("generate with a privileged Deployment: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestArgoCDParametersAnnouncement checks plugin.yaml's parameters against
// Argo CD's CMP v2 contract for static parameter announcements: each has a
// unique name, only the documented fields, a collectionType of string, array
// or map (empty means string) and a default, if any, in the field of that type.
func TestArgoCDParametersAnnouncement(t *testing.T) {
	var doc struct {
		Spec struct {
			Parameters struct {
				Static []map[string]any `yaml:"static"`
			} `yaml:"parameters"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(repoRoot, "examples/argocd/plugin.yaml"))), &doc); err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{"name": true, "title": true, "tooltip": true, "required": true, "itemType": true,
		"collectionType": true, "string": true, "array": true, "map": true}
	seen := map[string]bool{}
	if len(doc.Spec.Parameters.Static) == 0 {
		t.Fatal("plugin.yaml announces no parameters")
	}
	for _, p := range doc.Spec.Parameters.Static {
		name, _ := p["name"].(string)
		if name == "" || seen[name] {
			t.Errorf("parameter %v: empty or repeated name", p)
		}
		seen[name] = true
		for k := range p {
			if !fields[k] {
				t.Errorf("parameter %q has field %q, which Argo CD does not define", name, k)
			}
		}
		ct, _ := p["collectionType"].(string)
		if ct == "" {
			ct = "string"
		}
		switch ct {
		case "string", "array", "map":
		default:
			t.Errorf("parameter %q: collectionType %q, want string, array or map", name, ct)
		}
		for _, other := range []string{"string", "array", "map"} {
			if _, ok := p[other]; ok && other != ct {
				t.Errorf("parameter %q of collectionType %s has a default in %q", name, ct, other)
			}
		}
		if title, _ := p["title"].(string); title == "" {
			t.Errorf("parameter %q has no title (the UI shows it)", name)
		}
	}
}
