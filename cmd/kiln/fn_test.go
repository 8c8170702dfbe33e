package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fnItems are the items of the ResourceLists below: a pod that breaks the
// restricted profile (with kustomize's path and index annotations) and one that passes it.
const fnBadPod = `- apiVersion: v1
  kind: Pod
  metadata:
    name: bad
    namespace: shop
    annotations:
      internal.config.kubernetes.io/path: pods/bad.yaml
      internal.config.kubernetes.io/index: '1'
  spec:
    containers:
    - name: app # a comment that must survive
      image: ghcr.io/acme/app:1.0
      securityContext: {privileged: true}
      resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}
`

const fnGoodPod = `- apiVersion: v1
  kind: Pod
  metadata:
    name: good
    namespace: shop
    annotations:
      config.kubernetes.io/path: pods/good.yaml
  spec:
    securityContext:
      runAsNonRoot: true
      seccompProfile: {type: RuntimeDefault}
    containers:
    - name: app
      image: ghcr.io/acme/app:1.0
      securityContext:
        allowPrivilegeEscalation: false
        capabilities: {drop: [ALL]}
      resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}
`

// fnWarnNamespace enforces nothing and warns at restricted: its pods get warnings.
const fnWarnNamespace = `- apiVersion: v1
  kind: Namespace
  metadata:
    name: warned
    labels:
      pod-security.kubernetes.io/enforce: privileged
      pod-security.kubernetes.io/warn: restricted
- apiVersion: v1
  kind: Pod
  metadata: {name: warned, namespace: warned}
  spec:
    containers:
    - name: app
      image: ghcr.io/acme/app:1.0
`

func resourceList(items, functionConfig string) string {
	s := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items
	if functionConfig != "" {
		s += "functionConfig:\n" + indentLines(functionConfig, "  ")
	}
	return s
}

func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

func lintConfig(spec string) string {
	s := "apiVersion: kiln.dev/v1alpha1\nkind: Lint\nmetadata: {name: lint}\n"
	if spec != "" {
		s += "spec:\n" + indentLines(spec, "  ")
	}
	return s
}

// runFnText runs kiln fn in-process.
func runFnText(t *testing.T, input string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run([]string{"fn"}, strings.NewReader(input), &out, &errb)
	return code, out.String(), errb.String()
}

// parseOutput reads the ResourceList kiln fn wrote.
func parseOutput(t *testing.T, out string) (items []*yaml.RNode, results framework.Results) {
	t.Helper()
	rw := &kio.ByteReadWriter{Reader: strings.NewReader(out), OmitReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		t.Fatalf("output is not a ResourceList: %v\n%s", err, out)
	}
	if rw.WrappingKind != kio.ResourceListKind {
		t.Fatalf("output is wrapped in %q, want ResourceList:\n%s", rw.WrappingKind, out)
	}
	if rw.Results != nil {
		s, err := rw.Results.String()
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(s), &results); err != nil {
			t.Fatalf("results: %v\n%s", err, s)
		}
	}
	return items, results
}

func encodeItems(t *testing.T, items []*yaml.RNode) string {
	t.Helper()
	var b strings.Builder
	for _, it := range items {
		s, err := it.String()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(s + "---\n")
	}
	return b.String()
}

func TestFnValidator(t *testing.T) {
	type result struct{ rule, severity, field, file string }
	tests := []struct {
		name    string
		items   string
		config  string
		code    int
		results []result // a subset, in order, that must be present
		exact   bool     // results must be exactly these
		stderr  []string
	}{
		{
			name: "error finding fails with file, field and resourceRef", items: fnBadPod, config: lintConfig(""), code: 1,
			results: []result{{"psa/privileged", "error", "spec.containers[0].securityContext.privileged", "pods/bad.yaml#1"}},
			stderr:  []string{"pods/bad.yaml[1]: [error] v1/Pod/shop/bad spec.containers[0].securityContext.privileged: psa/privileged:"},
		},
		{name: "passing item", items: fnGoodPod, config: lintConfig(""), code: 0, exact: true},
		{name: "no functionConfig lints with defaults", items: fnBadPod, code: 1,
			results: []result{{"psa/privileged", "error", "spec.containers[0].securityContext.privileged", "pods/bad.yaml#1"}}},
		{name: "failOn never reports but passes", items: fnBadPod, config: lintConfig("failOn: never"), code: 0,
			results: []result{{"psa/privileged", "error", "spec.containers[0].securityContext.privileged", "pods/bad.yaml#1"}}},
		{name: "psaLevel privileged", items: fnBadPod, config: lintConfig("psaLevel: privileged"), code: 0, exact: true},
		{name: "rules off", items: fnBadPod, config: lintConfig("rules: {psa/*: off}"), code: 0, exact: true},
		{name: "rules downgraded to warning", items: fnBadPod, config: lintConfig("rules: {psa/*: warning}"), code: 0,
			results: []result{{"psa/privileged", "warning", "spec.containers[0].securityContext.privileged", "pods/bad.yaml#1"}}},
		{name: "warnings pass by default", items: fnWarnNamespace, config: lintConfig(""), code: 0,
			results: []result{{"psa/runAsNonRoot", "warning", "", ""}}},
		{name: "warnings fail with failOn warning", items: fnWarnNamespace, config: lintConfig("failOn: warning"), code: 1,
			results: []result{{"psa/runAsNonRoot", "warning", "", ""}}},
		{name: "legacy path annotations", items: fnGoodPod + strings.ReplaceAll(fnBadPod, "internal.config.kubernetes.io/", "config.kubernetes.io/"), config: lintConfig("psaVersion: latest\nkubeVersion: \"1.31\""), code: 1,
			results: []result{{"psa/privileged", "error", "spec.containers[0].securityContext.privileged", "pods/bad.yaml#1"}}},
		{name: "local-config items are not linted", items: strings.Replace(fnBadPod, "annotations:\n", "annotations:\n      config.kubernetes.io/local-config: 'true'\n", 1),
			config: lintConfig(""), code: 0, exact: true},
		{name: "unknown spec key", items: fnGoodPod, config: lintConfig("failon: never"), code: 2, stderr: []string{"unknown key spec.failon"}},
		{name: "bad failOn", items: fnGoodPod, config: lintConfig("failOn: sometimes"), code: 2, stderr: []string{`spec.failOn: "sometimes": use error, warning or never`}},
		{name: "bad kubeVersion", items: fnGoodPod, config: lintConfig("kubeVersion: banana"), code: 2, stderr: []string{"spec.kubeVersion: invalid Kubernetes version"}},
		{name: "bad rule setting", items: fnGoodPod, config: lintConfig("rules: {psa/*: loud}"), code: 2, stderr: []string{`"loud" is not a setting`}},
		{name: "unknown functionConfig kind", items: fnGoodPod, config: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: x}\n", code: 2,
			stderr: []string{"kiln fn takes kind Lint (validator) or App (generator)"}},
		{name: "item that is not an object", items: "- apiVersion: v1\n  metadata: {name: x}\n", config: lintConfig(""), code: 1,
			results: []result{{"", "error", "", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := resourceList(tt.items, tt.config)
			code, out, stderr := runFnText(t, in)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s\nstdout:\n%s", code, tt.code, stderr, out)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if code == 2 {
				return
			}
			items, results := parseOutput(t, out)
			inItems, _ := parseOutput(t, in)
			if got, want := encodeItems(t, items), encodeItems(t, inItems); got != want {
				t.Errorf("items changed:\n--- got ---\n%s--- want ---\n%s", got, want)
			}
			if !strings.Contains(out, "# a comment that must survive") && strings.Contains(in, "# a comment that must survive") {
				t.Errorf("comment lost:\n%s", out)
			}
			if tt.exact && len(results) != len(tt.results) {
				t.Errorf("got %d results, want %d:\n%s", len(results), len(tt.results), out)
			}
			next := 0
			for _, r := range results {
				if next == len(tt.results) {
					break
				}
				w := tt.results[next]
				file := ""
				if r.File != nil {
					file = r.File.Path + "#" + strconv.Itoa(r.File.Index)
				}
				field := ""
				if r.Field != nil {
					field = r.Field.Path
				}
				if r.Tags["rule"] == w.rule && string(r.Severity) == w.severity &&
					(w.field == "" || field == w.field) && (w.file == "" || file == w.file) {
					next++
					if r.Message == "" || (w.rule != "" && (r.ResourceRef == nil || r.ResourceRef.Kind == "" || r.ResourceRef.Name == "")) {
						t.Errorf("result lacks message or resourceRef: %+v", r)
					}
				}
			}
			if next < len(tt.results) {
				t.Errorf("missing result %+v in:\n%s", tt.results[next], out)
			}
		})
	}
}

// TestFnOutputGolden pins the whole ResourceList of a failing validation.
func TestFnOutputGolden(t *testing.T) {
	code, out, _ := runFnText(t, resourceList(fnBadPod, lintConfig("kubeVersion: \"1.31\"")))
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	golden.Check(t, "testdata/fn/validator-fail.golden", []byte(out))
}

// appConfig is an App spec used as a generator's functionConfig, with the
// annotations kustomize adds.
const appConfig = `apiVersion: kiln.dev/v1alpha1
kind: App
metadata:
  name: shop
  namespace: shop
  annotations:
    config.kubernetes.io/function: |
      exec: {path: kiln, args: [fn]}
    config.kubernetes.io/local-config: 'true'
spec:
  services:
    web:
      ports: {http: 8080}
      containers: [{name: app, image: ghcr.io/acme/shop:1.4.2, resources: {cpu: 100m, memory: 128Mi}, ready: {httpGet: {path: /healthz, port: http}}}]
`

func TestFnGenerator(t *testing.T) {
	in := resourceList(fnGoodPod, appConfig)
	code, out, stderr := runFnText(t, in)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s\nstdout:\n%s", code, stderr, out)
	}
	items, results := parseOutput(t, out)
	if len(results) != 0 {
		t.Errorf("compiled objects have findings: %+v", results)
	}
	if len(items) < 2 || items[0].GetName() != "good" {
		t.Fatalf("input items must come first, unchanged; got %d items:\n%s", len(items), out)
	}
	kinds := map[string]bool{}
	for _, it := range items[1:] {
		kinds[it.GetKind()+"/"+it.GetName()] = true
		if it.GetKind() == "App" {
			t.Errorf("the App itself was emitted, not compiled:\n%s", out)
		}
		for k := range it.GetAnnotations() {
			if strings.HasPrefix(k, "config.kubernetes.io/") {
				t.Errorf("%s/%s carries kustomize's annotation %s", it.GetKind(), it.GetName(), k)
			}
		}
	}
	if !kinds["Deployment/web"] || !kinds["Service/web"] {
		t.Errorf("want Deployment/web and Service/web among the generated objects, got %v", kinds)
	}
}

func TestFnInputErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"invalid YAML", "apiVersion: [", "fn:"},
		{"functionConfig not a mapping", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig: [a]\n", "functionConfig must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runFnText(t, tt.in)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

// FuzzResourceList feeds arbitrary input to kiln fn: it must never panic,
// must exit 0, 1 or 2, and whenever it exits 0 or 1 stdout must be a ResourceList
// holding at least the items it was given.
func FuzzResourceList(f *testing.F) {
	f.Add(resourceList(fnBadPod, lintConfig("")))
	f.Add(resourceList(fnGoodPod+fnWarnNamespace, lintConfig("failOn: warning\nrules: {psa/*: info}")))
	f.Add(resourceList(fnGoodPod, ""))
	f.Add("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [{}, [], 1, null]\n")
	f.Add("kind: ResourceList\nfunctionConfig: {kind: Lint, apiVersion: kiln.dev/v1alpha1, spec: [1]}\n")
	f.Add("apiVersion: v1\nkind: List\nitems:\n- &a {apiVersion: v1, kind: ConfigMap, metadata: {name: *a}}\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		var out, errb bytes.Buffer
		code := run([]string{"fn"}, strings.NewReader(in), &out, &errb)
		switch code {
		case 0, 1:
			if out.Len() == 0 {
				return // empty input, empty output
			}
			rw := &kio.ByteReadWriter{Reader: bytes.NewReader(out.Bytes()), OmitReaderAnnotations: true}
			if _, err := rw.Read(); err != nil {
				t.Fatalf("exit %d but output does not parse: %v\n%s", code, err, out.String())
			}
		case 2:
			if errb.Len() == 0 {
				t.Fatalf("exit 2 without a message on stderr")
			}
		default:
			t.Fatalf("exit %d", code)
		}
	})
}

// TestFnResultsCarryFixes: a result whose finding kiln fix can repair says
// how in its fix tag; one it cannot has none.
func TestFnResultsCarryFixes(t *testing.T) {
	_, out, _ := runFnText(t, resourceList(fnBadPod, lintConfig("")))
	_, results := parseOutput(t, out)
	seen := map[string]string{}
	for _, r := range results {
		seen[r.Tags["rule"]] = r.Tags["fix"]
	}
	if fix, ok := seen["psa/runAsNonRoot"]; !ok || !strings.Contains(fix, "runAsNonRoot: true") {
		t.Errorf("psa/runAsNonRoot fix tag = %q (present %v), want what kiln fix sets", fix, ok)
	}
	if fix, ok := seen["psa/privileged"]; !ok || fix != "" {
		t.Errorf("psa/privileged fix tag = %q (present %v), want none: kiln fix does not repair it", fix, ok)
	}
}
