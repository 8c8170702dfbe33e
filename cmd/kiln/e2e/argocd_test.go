package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// plugin is the part of examples/argocd/plugin.yaml the tests run.
type plugin struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Discover struct {
			Find struct {
				Command []string `yaml:"command"`
			} `yaml:"find"`
		} `yaml:"discover"`
		Generate struct {
			Command []string `yaml:"command"`
			Args    []string `yaml:"args"`
		} `yaml:"generate"`
		Parameters struct {
			Static []struct {
				Name string `yaml:"name"`
			} `yaml:"static"`
		} `yaml:"parameters"`
	} `yaml:"spec"`
}

func loadPlugin(t *testing.T) plugin {
	t.Helper()
	var p plugin
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(repoRoot, "examples/argocd/plugin.yaml"))), &p); err != nil {
		t.Fatalf("plugin.yaml: %v", err)
	}
	if p.APIVersion != "argoproj.io/v1alpha1" || p.Kind != "ConfigManagementPlugin" || p.Metadata.Name == "" {
		t.Fatalf("plugin.yaml is not a named ConfigManagementPlugin: %+v", p)
	}
	if len(p.Spec.Generate.Command) == 0 || len(p.Spec.Discover.Find.Command) == 0 {
		t.Fatalf("plugin.yaml lacks generate or discover commands: %+v", p.Spec)
	}
	return p
}

// cmpEnv is the environment the Argo CD CMP server gives a plugin command:
// the sidecar's own (PATH with kiln; HOME that cannot be written: it lies
// under a regular file, which defeats even root) plus the build environment.
func cmpEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + binDir + string(os.PathListSeparator) + "/usr/bin:/bin",
		"HOME=" + filepath.Join(blocker, "home"),
		"XDG_CACHE_HOME=" + filepath.Join(blocker, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(blocker, "config"),
		"TMPDIR=" + filepath.Join(blocker, "tmp"),
		"ARGOCD_APP_NAME=shop",
		"ARGOCD_APP_NAMESPACE=shop",
		"ARGOCD_APP_PROJECT_NAME=default",
		"ARGOCD_APP_REVISION=f913b6cbf58aa5ae5ca1f8a2b149477aebcbd9d8",
		"ARGOCD_APP_SOURCE_PATH=apps/shop",
		"ARGOCD_APP_SOURCE_REPO_URL=https://git.example.com/acme/deploy.git",
		"ARGOCD_APP_SOURCE_TARGET_REVISION=main",
		"KUBE_VERSION=1.31.4",
		"KUBE_API_VERSIONS=v1,apps/v1,batch/v1",
	}
	return append(env, extra...)
}

// snapshot records every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		out[rel] = readFile(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// argoApp is a repository as the sidecar receives it: apps/shop holds an App
// spec, a plain manifest without a namespace and a .kiln.yaml.
func argoRepo(t *testing.T, extra map[string]string) (repo, app string) {
	t.Helper()
	files := map[string]string{
		"apps/shop/app.yaml": strings.Replace(appSpec, "  namespace: shop\n", "", 1), // namespace from ARGOCD_APP_NAMESPACE
		"apps/shop/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings # no namespace: the Application's
data:
  mode: production
`,
		"apps/shop/.kiln.yaml":         "psa: {level: restricted}\n",
		"apps/plain/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"apps/kust/kustomization.yaml": "resources: [app.yaml]\n",
		"apps/kust/app.yaml":           appSpec,
		"policies/README.md":           "shared policies live here\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	repo = writeTree(t, files)
	return repo, filepath.Join(repo, "apps/shop")
}

func TestArgoCDGenerateAsCMPServer(t *testing.T) {
	p := loadPlugin(t)
	repo, app := argoRepo(t, nil)
	before := snapshot(t, repo)
	params, _ := json.Marshal([]map[string]any{
		{"name": "fail-on", "string": "error"},
		{"name": "psa-version", "string": "v1.31"},
	})
	env := cmpEnv(t, "ARGOCD_ENV_KILN_PSA_LEVEL=restricted", "ARGOCD_APP_PARAMETERS="+string(params))
	r := runIn(t, app, env, p.Spec.Generate.Command[0], append(p.Spec.Generate.Command[1:], p.Spec.Generate.Args...)...)
	if r.code != 0 {
		t.Fatalf("generate: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	// stdout is a clean YAML stream: every document an object, nothing else.
	objs, errs := manifest.Parse("stdout", []byte(r.stdout))
	if len(errs) > 0 {
		t.Fatalf("stdout is not a clean stream: %v\n%s", errs, r.stdout)
	}
	got := map[string]string{}
	for _, o := range objs {
		got[o.Kind+"/"+o.Name] = o.Namespace
	}
	want := map[string]string{"ConfigMap/settings": "shop", "Deployment/web": "shop", "Service/web": "shop"}
	if len(got) != len(want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	for k, ns := range want {
		if got[k] != ns {
			t.Errorf("%s in namespace %q, want %q (all: %v)", k, got[k], ns, got)
		}
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "kiln") || strings.Contains(line, "warning") {
			t.Errorf("stdout carries a log line: %q", line)
		}
	}
	if after := snapshot(t, repo); len(after) != len(before) {
		t.Errorf("generate changed the repository: %d entries before, %d after", len(before), len(after))
	}
}

func TestArgoCDGenerateLintErrors(t *testing.T) {
	p := loadPlugin(t)
	_, app := argoRepo(t, map[string]string{"apps/shop/rogue.yaml": badDeployment})
	r := runIn(t, app, cmpEnv(t), p.Spec.Generate.Command[0], p.Spec.Generate.Command[1:]...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout must be empty when the sync must fail, got:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "rogue.yaml:") || !strings.Contains(r.stderr, "psa/privileged") {
		t.Errorf("stderr does not show the finding:\n%s", r.stderr)
	}
	// The Application can lower the bar with a parameter.
	r = runIn(t, app, cmpEnv(t, `ARGOCD_APP_PARAMETERS=[{"name":"psa-level","string":"privileged"},{"name":"fail-on","string":"never"}]`),
		p.Spec.Generate.Command[0], p.Spec.Generate.Command[1:]...)
	if r.code != 0 || !strings.Contains(r.stdout, "name: rogue") {
		t.Errorf("with fail-on never: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	// A typo in the Application's plugin env is an error, not silently ignored.
	r = runIn(t, app, cmpEnv(t, "ARGOCD_ENV_KILN_PSA_LEVL=baseline"), p.Spec.Generate.Command[0], p.Spec.Generate.Command[1:]...)
	if r.code != 2 || !strings.Contains(r.stderr, "ARGOCD_ENV_KILN_PSA_LEVL") || r.stdout != "" {
		t.Errorf("unknown setting: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestArgoCDExamples checks the wiring of the sidecar: the ConfigMap carries
// plugin.yaml verbatim, the sidecar runs argocd-cmp-server as uid 999 and
// mounts plugin.yaml where the CMP server reads it, and the Application's
// parameters are ones the plugin announces.
func TestArgoCDExamples(t *testing.T) {
	p := loadPlugin(t)
	dir := filepath.Join(repoRoot, "examples/argocd")
	cm, err := yaml.Parse(readFile(t, filepath.Join(dir, "cmp-plugin-configmap.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if cm.GetDataMap()["plugin.yaml"] != readFile(t, filepath.Join(dir, "plugin.yaml")) {
		t.Errorf("cmp-plugin-configmap.yaml's plugin.yaml differs from plugin.yaml")
	}
	patch, err := yaml.Parse(readFile(t, filepath.Join(dir, "repo-server-patch.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	c, err := patch.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=kiln]"))
	if err != nil || c == nil {
		t.Fatalf("no kiln container in the patch: %v", err)
	}
	if s, _ := c.Pipe(yaml.Lookup("securityContext", "runAsUser")); s == nil || s.YNode().Value != "999" {
		t.Errorf("the sidecar must run as uid 999")
	}
	if s, _ := c.Pipe(yaml.Lookup("command")); s == nil || !strings.Contains(s.MustString(), "/var/run/argocd/argocd-cmp-server") {
		t.Errorf("the sidecar must run /var/run/argocd/argocd-cmp-server")
	}
	m, _ := c.Pipe(yaml.Lookup("volumeMounts", "[mountPath=/home/argocd/cmp-server/config/plugin.yaml]"))
	if m == nil || m.Field("subPath") == nil || m.Field("subPath").Value.YNode().Value != "plugin.yaml" {
		t.Errorf("plugin.yaml must be mounted at /home/argocd/cmp-server/config/plugin.yaml with subPath plugin.yaml")
	}
	for _, path := range []string{"/var/run/argocd", "/home/argocd/cmp-server/plugins", "/tmp"} {
		if m, _ := c.Pipe(yaml.Lookup("volumeMounts", "[mountPath="+path+"]")); m == nil {
			t.Errorf("the sidecar lacks the %s mount", path)
		}
	}
	announced := map[string]bool{}
	for _, s := range p.Spec.Parameters.Static {
		announced[s.Name] = true
	}
	appl, err := yaml.Parse(readFile(t, filepath.Join(dir, "application.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	params, _ := appl.Pipe(yaml.Lookup("spec", "source", "plugin", "parameters"))
	if params == nil {
		t.Fatal("application.yaml sets no plugin parameters")
	}
	for _, e := range params.YNode().Content {
		name := yaml.NewRNode(e).Field("name").Value.YNode().Value
		if !announced[name] {
			t.Errorf("application.yaml sets parameter %q that plugin.yaml does not announce", name)
		}
	}
	// Every announced parameter is one kiln accepts: generate with each set.
	_, app := argoRepo(t, nil)
	for name := range announced {
		value := `"string":""`
		if name == "policies" {
			value = `"array":[]`
		}
		r := runIn(t, app, cmpEnv(t, `ARGOCD_APP_PARAMETERS=[{"name":"`+name+`",`+value+`}]`), p.Spec.Generate.Command[0], p.Spec.Generate.Command[1:]...)
		if strings.Contains(r.stderr, "unknown plugin parameter") {
			t.Errorf("kiln rejects announced parameter %q: %s", name, r.stderr)
		}
	}
}

// wavesOf maps kind/name to the sync wave of each object of a YAML stream.
func wavesOf(t *testing.T, stream string) map[string]string {
	t.Helper()
	objs, errs := manifest.Parse("stdout", []byte(stream))
	if len(errs) > 0 {
		t.Fatalf("not a YAML stream: %v\n%s", errs, stream)
	}
	out := map[string]string{}
	for _, o := range objs {
		out[o.Kind+"/"+o.Name] = o.Annotations["argocd.argoproj.io/sync-wave"]
	}
	return out
}

// TestArgoCDSyncWaves: kiln argocd generate annotates the compiled objects
// (not the plain manifests) with their sync waves unless --no-sync-waves is
// given; kiln build does with --argocd only.
func TestArgoCDSyncWaves(t *testing.T) {
	p := loadPlugin(t)
	_, app := argoRepo(t, nil)
	r := runIn(t, app, cmpEnv(t), p.Spec.Generate.Command[0], p.Spec.Generate.Command[1:]...)
	if got, want := wavesOf(t, r.stdout), map[string]string{"ConfigMap/settings": "", "Service/web": "-1", "Deployment/web": "0"}; r.code != 0 || !equalMaps(got, want) {
		t.Errorf("generate: exit %d, waves %v, want %v\n%s", r.code, got, want, r.stderr)
	}
	r = runIn(t, app, cmpEnv(t), p.Spec.Generate.Command[0], append(p.Spec.Generate.Command[1:], "--no-sync-waves")...)
	if got, want := wavesOf(t, r.stdout), map[string]string{"ConfigMap/settings": "", "Service/web": "", "Deployment/web": ""}; r.code != 0 || !equalMaps(got, want) {
		t.Errorf("generate --no-sync-waves: exit %d, waves %v, want none\n%s", r.code, got, r.stderr)
	}
	web := filepath.Join(repoRoot, "examples/web/app.yaml")
	r = runIn(t, repoRoot, nil, kilnBin, "build", "--argocd", web)
	want := map[string]string{"Namespace/shop": "-2", "PersistentVolumeClaim/uploads": "0", "ConfigMap/envoy": "-1", "ConfigMap/fluent-bit": "-1",
		"ConfigMap/web": "-1", "Service/web": "-1", "Deployment/web": "0"}
	if got := wavesOf(t, r.stdout); r.code != 0 || !equalMaps(got, want) {
		t.Errorf("kiln build --argocd examples/web: exit %d, waves %v, want %v\n%s", r.code, got, want, r.stderr)
	}
	r = runIn(t, repoRoot, nil, kilnBin, "build", web)
	for k, w := range wavesOf(t, r.stdout) {
		if w != "" {
			t.Errorf("kiln build without --argocd: %s has sync wave %q", k, w)
		}
	}
}
