package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/session"
)

// fakeEnv is an environment for readArgoSettings and argoGenerate.
type fakeEnv map[string]string

func (f fakeEnv) lookup(k string) (string, bool) { v, ok := f[k]; return v, ok }

func (f fakeEnv) environ() []string {
	var out []string
	for k, v := range f {
		out = append(out, k+"="+v)
	}
	return out
}

// argoApp is an app directory: a restricted-compliant Deployment without a
// namespace, a ClusterRole, a Namespace, and files generate must not read.
var argoApp = map[string]string{
	"deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # the web tier
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: app
        image: ghcr.io/acme/web:1.0
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
	"cluster/rbac.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules: []
---
apiVersion: v1
kind: Namespace
metadata: {name: extra}
`,
	".kiln.yaml":         "psa: {level: restricted}\n",
	"kustomization.yaml": "resources: [deploy.yaml]\n",
	".github/ci.yaml":    "on: push\n",
}

const argoBadPod = `apiVersion: v1
kind: Pod
metadata: {name: bad}
spec:
  containers:
  - name: app
    image: ghcr.io/acme/app:1.0
    securityContext: {privileged: true}
`

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runArgo(t *testing.T, dir string, vars fakeEnv) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader("")}
	err := argoGenerate(e, dir, vars.lookup, vars.environ(), true)
	code = session.ExitCode(err, &errb)
	return code, out.String(), errb.String()
}

func TestArgoGenerate(t *testing.T) {
	base := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range argoApp {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name   string
		files  map[string]string
		env    fakeEnv
		code   int
		golden string   // stdout golden, for code 0
		stderr []string // substrings
	}{
		{name: "clean app", files: base(nil), env: fakeEnv{"ARGOCD_APP_NAMESPACE": "shop", "KUBE_VERSION": "1.31.2", "ARGOCD_APP_NAME": "shop"},
			code: 0, golden: "testdata/argocd/clean.golden"},
		{name: "lint error", files: base(map[string]string{"bad.yaml": argoBadPod}), env: fakeEnv{"ARGOCD_APP_NAMESPACE": "shop"},
			code: 1, stderr: []string{"bad.yaml:8:", "psa/privileged", "nothing generated"}},
		{name: "lint error, fail-on never", files: base(map[string]string{"bad.yaml": argoBadPod}),
			env: fakeEnv{"ARGOCD_APP_NAMESPACE": "shop", "ARGOCD_ENV_KILN_FAIL_ON": "never"}, code: 0, stderr: []string{"psa/privileged"}},
		{name: "psa level from parameters", files: base(map[string]string{"bad.yaml": argoBadPod}),
			env: fakeEnv{"ARGOCD_APP_PARAMETERS": `[{"name":"psa-level","string":"privileged"}]`}, code: 0},
		{name: "invalid YAML", files: base(map[string]string{"broken.yaml": "kind: [\n"}), env: fakeEnv{}, code: 2, stderr: []string{"broken.yaml:"}},
		{name: "bad psa level", files: base(nil), env: fakeEnv{"ARGOCD_ENV_KILN_PSA_LEVEL": "strict"}, code: 2, stderr: []string{"ARGOCD_ENV_KILN_PSA_LEVEL: \"strict\" is not a Pod Security level"}},
		{name: "empty app", files: map[string]string{"README.md": "nothing"}, env: fakeEnv{}, code: 2, stderr: []string{"no *.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			code, out, stderr := runArgo(t, dir, tt.env)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s\nstdout:\n%s", code, tt.code, stderr, out)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if code != 0 {
				if out != "" {
					t.Errorf("stdout must be empty on failure, got:\n%s", out)
				}
				return
			}
			objs, errs := manifest.Parse("stdout", []byte(out))
			if len(errs) > 0 || len(objs) == 0 {
				t.Fatalf("stdout is not a clean stream of objects: %v\n%s", errs, out)
			}
			if tt.golden != "" {
				golden.Check(t, tt.golden, []byte(out))
			}
		})
	}
}

func TestArgoGenerateNamespaces(t *testing.T) {
	dir := writeTree(t, argoApp)
	code, out, stderr := runArgo(t, dir, fakeEnv{"ARGOCD_APP_NAMESPACE": "shop"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	objs, _ := manifest.Parse("stdout", []byte(out))
	got := map[string]string{}
	for _, o := range objs {
		got[o.Kind+"/"+o.Name] = o.Namespace
	}
	want := map[string]string{"Deployment/web": "shop", "ClusterRole/reader": "", "Namespace/extra": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects and namespaces = %v, want %v (hidden files and kustomization.yaml are not read)", got, want)
	}
	if !strings.Contains(out, "# the web tier") {
		t.Errorf("comments lost:\n%s", out)
	}
}

// BenchmarkArgoGenerate times kiln argocd generate on an app of 300 objects
// (Argo CD kills a plugin after 90 s by default).
func BenchmarkArgoGenerate(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 150; i++ {
		name := "web-" + strconv.Itoa(i)
		sb.WriteString(strings.ReplaceAll(argoApp["deploy.yaml"], "web", name) + "---\n")
		sb.WriteString("apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec:\n  selector: {app: " + name + "}\n  ports: [{port: 80}]\n---\n")
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	vars := fakeEnv{"ARGOCD_APP_NAMESPACE": "shop", "KUBE_VERSION": "1.31.0"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader("")}
		if err := argoGenerate(e, dir, vars.lookup, vars.environ(), true); err != nil {
			b.Fatalf("%v\n%s", err, errb.String())
		}
	}
}
