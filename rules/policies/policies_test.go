package policies

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/cel"
	"github.com/kilnhq/kiln/rules/sidecar"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestPoliciesAndRules(t *testing.T) {
	ps := All()
	var names []string
	for _, f := range families {
		n, err := fs.Glob(f.policies, "*.yaml")
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n...)
	}
	// Every family folder's policies, found by their folders, are embedded.
	onDisk, _ := filepath.Glob("../*/policies/*.yaml")
	if len(names) == 0 || len(onDisk) != len(names) {
		t.Fatalf("%d policies embedded, %d in rules/*/policies/ (a new family's folder must be added to families)", len(names), len(onDisk))
	}
	if len(ps) != len(names) {
		t.Errorf("%d policies from %d files", len(ps), len(names))
	}
	// Every rule is documented, with examples, and has its fixtures in its
	// family's folder (rules/<family>/testdata/<name>/), where the family's
	// fixture test runs them.
	for _, r := range Rules() {
		if r.Severity == 0 || r.Summary == "" || r.Doc == "" || r.Fail == "" || r.Pass == "" {
			t.Errorf("%s: missing severity, summary, doc or example", r.ID)
		}
		family, name, _ := strings.Cut(r.ID, "/")
		for _, f := range []string{"fail.yaml", "pass.yaml", "near.yaml"} {
			if _, err := os.Stat(filepath.Join("..", family, "testdata", name, f)); err != nil {
				t.Errorf("%s: no fixture rules/%s/testdata/%s/%s", r.ID, family, name, f)
			}
		}
	}
	// jobset/indexed: the completionMode policy is the rule (error), the
	// completions one reports warnings under the same ID.
	sev := map[string]rules.Severity{}
	for _, p := range ps {
		sev[p.Name] = p.Severity
	}
	if sev["kiln-jobset-indexed"] != rules.Error || sev["kiln-jobset-indexed-completions"] != rules.Warning {
		t.Errorf("jobset/indexed severities: %v", sev)
	}
	if Checker.Name != "policies" || len(Checker.Rules) != len(Rules()) {
		t.Errorf("Checker %s declares %d rules", Checker.Name, len(Checker.Rules))
	}
}

// TestEngineSetup: every policy compiles, with its binding and the params,
// with no problem the API server would report (the whole export, for each
// target version kiln knows), and kiln lint evaluates exactly the policies
// that can report at the target.
func TestEngineSetup(t *testing.T) {
	gated := 0 // targets at which some policy cannot report (kiln.dev/kube-below, kube-at-least)
	for v := manifest.OldestKube; !manifest.LatestKube.Less(v); v.Minor++ {
		objs, err := Objects(ExportOptions{KubeVersion: v, Actions: []admissionv1.ValidationAction{admissionv1.Warn}})
		if err != nil {
			t.Fatal(err)
		}
		if setup := cel.New(objs, objs, cel.Options{}).Setup(); len(setup) > 0 {
			t.Errorf("%s: %+v", v, setup)
		}
		opts := rules.DefaultOptions()
		opts.KubeVersion = v
		e, err := newEngine(opts, func(*Policy) bool { return true })
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		want := 0
		for _, p := range All() {
			if p.AppliesTo(v) {
				want++
			}
		}
		if want < len(All()) {
			gated++
		}
		if n := e.Bindings(); n != want {
			t.Errorf("%s: kiln lint evaluates %d policies, want %d", v, n, want)
		}
	}
	if gated == 0 {
		t.Error("every policy is evaluated at every target: the version gates are not applied")
	}
}

func TestParamsData(t *testing.T) {
	d := ParamsData(manifest.KubeVersion{Major: 1, Minor: 28})
	if d["kubeVersion"] != "1.28" {
		t.Errorf("kubeVersion = %q", d["kubeVersion"])
	}
	n := 0
	bare, slashed := map[string]bool{}, map[string]bool{}
	for _, h := range sidecar.Helpers() {
		for _, img := range h.Images {
			n++
			if got := d["helper."+strings.ReplaceAll(img, "/", ".")]; got != h.What {
				t.Errorf("helper %s = %q, want %q", img, got, h.What)
			}
			// The lookup in the policies is exact only if names hold no "."
			// (the encoding of "/"), at most one "/", and no bare name is the
			// last segment of a slashed one (then table order cannot matter).
			if strings.Contains(img, ".") || strings.Count(img, "/") > 1 {
				t.Errorf("helper image name %q: the policies cannot look it up", img)
			}
			if i := strings.IndexByte(img, '/'); i >= 0 {
				slashed[img[i+1:]] = true
			} else {
				bare[img] = true
			}
		}
	}
	for b := range bare {
		if slashed[b] {
			t.Errorf("helper name %q is both a bare name and the last segment of a slashed one", b)
		}
	}
	if len(d) != n+1 || n < 30 {
		t.Errorf("params data has %d keys for %d images", len(d), n)
	}
	for _, img := range []string{"docker.io/istio/proxyv2:1", "cr.l5d.io/linkerd/proxy:x", "ghcr.io/acme/proxy:1", "localhost:5000/envoy", "acme/envoy.v2", "x/hashicorp/vault:1", "vault:1"} {
		want := sidecar.KnownHelper(img)
		if got := lookupLikePolicy(d, manifest.ImageRepository(img)); got != want {
			t.Errorf("%s: lookup %q, KnownHelper %q", img, got, want)
		}
	}
}

// lookupLikePolicy is the policies' lookup (variable "regular") in Go.
func lookupLikePolicy(d map[string]string, repo string) string {
	last := repo[strings.LastIndexByte(repo, '/')+1:]
	two := ""
	if i := strings.LastIndexByte(repo, '/'); i >= 0 {
		two = repo[strings.LastIndexByte(repo[:i], '/')+1:]
	}
	if two != "" && !strings.Contains(two, ".") {
		if w, ok := d["helper."+strings.ReplaceAll(two, "/", ".")]; ok {
			return w
		}
	}
	if last != "" && !strings.Contains(last, ".") {
		return d["helper."+last]
	}
	return ""
}

// TestParamsReachPolicies: the rules read the target version and the
// helper table from the params, not from a copy in the YAML: the same pod
// gives different verdicts for 1.28 and 1.29, and the image (upper case,
// registry, tag and digest) is matched through the table.
func TestParamsReachPolicies(t *testing.T) {
	pod := `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  initContainers: [{name: s, image: fluent/fluent-bit:3, restartPolicy: Always}]
  containers: [{name: app, image: acme/app:1}, {name: h, image: "Docker.io/EnvoyProxy/Envoy:v1@sha256:00"}]
`
	for _, tc := range []struct {
		kube string
		want []string
	}{
		{"1.28", []string{
			"sidecar/needs-1.29 spec.initContainers[0].restartPolicy: native sidecar \"s\" (init container with restartPolicy: Always) needs Kubernetes 1.29; in 1.28 it is alpha and runs only with the SidecarContainers feature gate enabled",
			"sidecar/classic-in-job spec.containers[1]: container \"h\" runs Envoy proxy (docker.io/envoyproxy/envoy) in containers[] of a Pod pod: it never exits, so the pod never completes; native sidecars need Kubernetes 1.29 (target is 1.28): until then, have the app stop it when the work is done (e.g. the helper's quit endpoint)",
		}},
		{"1.29", []string{
			"sidecar/classic-in-job spec.containers[1]: container \"h\" runs Envoy proxy (docker.io/envoyproxy/envoy) in containers[] of a Pod pod: it never exits, so the pod never completes; make it a native sidecar: move it to initContainers with restartPolicy: Always",
		}},
	} {
		opts := rules.DefaultOptions()
		opts.KubeVersion, _ = manifest.ParseKubeVersion(tc.kube)
		if got := lint(t, pod, opts); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.kube, got, tc.want)
		}
	}
}

func lint(t *testing.T, src string, opts *rules.Options) []string {
	t.Helper()
	objs, errs := manifest.Parse("t.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	res, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}, Options: opts}).Run(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range res.Findings {
		out = append(out, fmt.Sprintf("%s %s: %s", f.Rule, f.Field, f.Message))
	}
	return out
}

// TestManyFindings: one rule failing on many containers of one object
// gives one finding per container, in windows of 8 entries a validation
// (a message must stay under the API server's 5 KiB); past 48 the last
// window points at the 49th with a count. It also shows that the cost of
// a 300-container pod stays within the server's budget (an evaluation over
// budget would drop the findings: failurePolicy is Ignore).
func TestManyFindings(t *testing.T) {
	for _, n := range []int{1, 8, 9, 30, 48, 49, 300} {
		var b strings.Builder
		b.WriteString("apiVersion: batch/v1\nkind: Job\nmetadata: {name: big}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - {name: app, image: acme/app:1}\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "        - {name: helper-%03d, image: docker.io/istio/proxyv2:1.22.%d}\n", i, i)
		}
		got := lint(t, b.String(), rules.DefaultOptions())
		want := min(n, 48)
		if n > 48 {
			want++
		}
		if len(got) != want {
			t.Errorf("%d helpers: %d findings, want %d", n, len(got), want)
			continue
		}
		for i := 0; i < min(n, 48); i++ {
			if !strings.Contains(got[i], fmt.Sprintf(`spec.template.spec.containers[%d]: container "helper-%03d" runs Istio proxy`, i+1, i)) {
				t.Errorf("%d helpers: finding %d: %s", n, i, got[i])
				break
			}
		}
		if n > 48 {
			w := fmt.Sprintf("sidecar/classic-in-job spec.template.spec.containers[49]: and %d more findings of this rule on this object (kiln reports at most 48 a rule and object)", n-48)
			if got[48] != w {
				t.Errorf("%d helpers: last finding %q, want %q", n, got[48], w)
			}
		}
	}
}

// TestBigJobSet: a JobSet of 40 replicated jobs × 20 containers, each
// requesting GPUs without a limit and with long names, is evaluated within
// the cost budget: every finding is there.
func TestBigJobSet(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: a-jobset-with-a-rather-long-name}\nspec:\n  replicatedJobs:\n")
	for j := 0; j < 40; j++ {
		fmt.Fprintf(&b, "    - name: replicated-job-number-%02d\n      replicas: 2\n      template:\n        spec:\n          parallelism: 4\n          completions: 4\n          template:\n            spec:\n              containers:\n", j)
		for c := 0; c < 20; c++ {
			fmt.Fprintf(&b, "                - {name: c%d, image: acme/train:1, command: [torchrun, a-jobset-with-a-rather-long-name-replicated-job-number-00-0-0], resources: {requests: {nvidia.com/gpu: 1}}}\n", c)
		}
	}
	got := lint(t, b.String(), rules.DefaultOptions())
	count := map[string]int{}
	for _, f := range got {
		count[strings.Fields(f)[0]]++
	}
	// gpu-limits: 800 containers → 48 + 1; name-length: 40 replicated jobs.
	want := map[string]int{"jobset/gpu-limits": 49, "jobset/name-length": 40}
	if !reflect.DeepEqual(count, want) {
		t.Errorf("findings by rule: %v, want %v", count, want)
	}
}

func TestLoadErrors(t *testing.T) {
	good := func(name, ann string) string {
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: " + name + "\n  annotations:\n" + ann +
			"spec: {validations: [{expression: 'true'}]}\n"
	}
	ok := "    kiln.dev/rule: x/y\n    kiln.dev/severity: warning\n    kiln.dev/messages: field-path\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"ok", map[string]string{"a.yaml": good("a", ok)}, ""},
		{"no rule", map[string]string{"a.yaml": good("a", "    kiln.dev/severity: error\n    kiln.dev/messages: field-path\n")}, "must name a rule ID"},
		{"bad severity", map[string]string{"a.yaml": good("a", "    kiln.dev/rule: x/y\n    kiln.dev/severity: fatal\n    kiln.dev/messages: field-path\n")}, "unknown severity"},
		{"no convention", map[string]string{"a.yaml": good("a", "    kiln.dev/rule: x/y\n    kiln.dev/severity: error\n")}, "field-message convention"},
		{"two documents", map[string]string{"a.yaml": good("a", ok) + "---\n" + good("b", ok)}, "exactly one"},
		{"a binding", map[string]string{"a.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: a}\n"}, "exactly one"},
		{"duplicate", map[string]string{"a.yaml": good("a", ok), "b.yaml": good("a", ok)}, "also defined in a.yaml"},
		{"bad YAML", map[string]string{"a.yaml": "kind: [\n"}, "a.yaml"},
		{"bad version hint", map[string]string{"a.yaml": good("a", ok+"    kiln.dev/kube-below: soon\n")}, "kiln.dev/kube-below"},
	} {
		fsys := fstest.MapFS{}
		for n, c := range tc.files {
			fsys[n] = &fstest.MapFile{Data: []byte(c)}
		}
		_, err := load(fsys)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestAppliesTo(t *testing.T) {
	v := func(minor int) manifest.KubeVersion { return manifest.KubeVersion{Major: 1, Minor: minor} }
	p := &Policy{Below: v(35), AtLeast: v(29)}
	for minor, want := range map[int]bool{28: false, 29: true, 34: true, 35: false} {
		if got := p.AppliesTo(v(minor)); got != want {
			t.Errorf("1.%d: %v, want %v", minor, got, want)
		}
	}
	if !(&Policy{}).AppliesTo(v(20)) {
		t.Error("a policy without hints applies to every target")
	}
}

func TestParseActions(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string // actions joined, or "error"
	}{
		{[]string{"Warn"}, "Warn"},
		{[]string{"deny"}, "Deny"},
		{[]string{"Deny,Audit"}, "Deny,Audit"},
		{[]string{"audit", " WARN "}, "Audit,Warn"},
		{[]string{"Deny,Warn"}, "error"},
		{[]string{"Warn,Warn"}, "error"},
		{[]string{"Block"}, "error"},
		{[]string{""}, "error"},
		{nil, "error"},
	} {
		got, err := ParseActions(tc.in)
		s := "error"
		if err == nil {
			var parts []string
			for _, a := range got {
				parts = append(parts, string(a))
			}
			s = strings.Join(parts, ",")
		}
		if s != tc.want {
			t.Errorf("ParseActions(%q) = %s (%v), want %s", tc.in, s, err, tc.want)
		}
	}
}

func FuzzParseActions(f *testing.F) {
	for _, s := range []string{"Warn", "Deny,Audit", "deny,warn", "", ",", "Audit,Audit"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseActions([]string{s})
		if err != nil {
			return
		}
		seen := map[admissionv1.ValidationAction]bool{}
		for _, a := range got {
			if a != admissionv1.Deny && a != admissionv1.Warn && a != admissionv1.Audit || seen[a] {
				t.Fatalf("%q → %v", s, got)
			}
			seen[a] = true
		}
		if len(got) == 0 || seen[admissionv1.Deny] && seen[admissionv1.Warn] {
			t.Fatalf("%q → %v", s, got)
		}
	})
}

func TestParseNamespaceSelector(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"env=prod", `{"matchLabels":{"env":"prod"}}`},
		{"env==prod,team!=ml", `{"matchLabels":{"env":"prod"},"matchExpressions":[{"key":"team","operator":"NotIn","values":["ml"]}]}`},
		{"tier in (web,api),!legacy,owner", `{"matchExpressions":[{"key":"legacy","operator":"DoesNotExist"},{"key":"owner","operator":"Exists"},{"key":"tier","operator":"In","values":["api","web"]}]}`},
		{"a notin (x)", `{"matchExpressions":[{"key":"a","operator":"NotIn","values":["x"]}]}`},
		{"", `{}`},
		{"n>1", "error"},
		{"env in prod", "error"},
		{"=x", "error"},
	} {
		sel, err := ParseNamespaceSelector(tc.in)
		got := "error"
		if err == nil {
			got = mustJSON(t, sel)
		}
		if got != tc.want {
			t.Errorf("ParseNamespaceSelector(%q) = %s (%v), want %s", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseNamespaceSelector: whatever selector labels.Parse accepts and
// ParseNamespaceSelector converts selects the same label sets once the API
// server turns the LabelSelector back into a selector.
func FuzzParseNamespaceSelector(f *testing.F) {
	for _, s := range []string{"env=prod,team!=ml", "tier in (a,b),!legacy", "x", "a==b", "a notin (b,c)", "k=v,k=w"} {
		f.Add(s, "env", "prod")
	}
	f.Fuzz(func(t *testing.T, s, k, v string) {
		want, err := labels.Parse(s)
		if err != nil {
			return
		}
		ls, err := ParseNamespaceSelector(s)
		if err != nil {
			return // Gt and Lt
		}
		got, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			t.Fatalf("%q → %+v does not convert back: %v", s, ls, err)
		}
		reqs, _ := want.Requirements()
		for _, set := range []labels.Set{{}, {k: v}, {k: v, "env": "prod"}, {"team": "ml"}} {
			for _, r := range reqs {
				for _, val := range r.Values().List() {
					set = labels.Merge(set, labels.Set{r.Key(): val})
				}
			}
			if got.Matches(set) != want.Matches(set) {
				t.Fatalf("%q on %v: exported selector %v, labels.Parse %v", s, set, got.Matches(set), want.Matches(set))
			}
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFamilyFixes: each repair a family offers is for a rule one of its
// own policies implements, and kiln fix knows every one of them.
func TestFamilyFixes(t *testing.T) {
	n := 0
	for _, f := range families {
		ps, err := load(f.policies)
		if err != nil {
			t.Fatal(err)
		}
		for id := range f.fixes {
			n++
			if !slices.ContainsFunc(ps, func(p *Policy) bool { return p.Rule == id }) {
				t.Errorf("a family offers a fix for %s, which none of its policies implements", id)
			}
			if !slices.Contains(FixableRules(), id) {
				t.Errorf("FixableRules lacks %s", id)
			}
		}
	}
	if n == 0 || len(FixableRules()) != n {
		t.Errorf("FixableRules = %v, from %d family fixes", FixableRules(), n)
	}
}

// TestEngineObjects: the engine's objects are Objects' (the exported
// stream, parsed), in order, with equal kinds, names and content (their
// files and documents differ), for every target kiln
// knows and for a subset of the policies.
func TestEngineObjects(t *testing.T) {
	some := func(p *Policy) bool { return strings.HasPrefix(p.Name, "kiln-sidecar-") }
	for v := manifest.OldestKube; !manifest.LatestKube.Less(v); v.Minor++ {
		for _, keep := range []func(*Policy) bool{nil, some} {
			opts := ExportOptions{KubeVersion: v, Actions: []admissionv1.ValidationAction{admissionv1.Deny, admissionv1.Audit}, Keep: keep}
			want, err := Objects(opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := engineObjects(opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d objects, want %d", v, len(got), len(want))
			}
			for i := range want {
				wc, _ := want[i].Content()
				gc, _ := got[i].Content()
				g, w := got[i].Kind+"/"+got[i].Name, want[i].Kind+"/"+want[i].Name
				if g != w || !reflect.DeepEqual(gc, wc) {
					t.Errorf("%s: object %d is %s, want %s (or their content differs)", v, i, g, w)
				}
			}
		}
	}
}

// TestMetadata: the rule metadata read from the part of each file before
// its spec is the parsed policies' (so Rules is what it would be from
// them), and a file that puts its spec first is refused, not misread.
func TestMetadata(t *testing.T) {
	var full []ruleMeta
	for _, p := range loaded() {
		full = append(full, ruleMeta{name: p.Name, rule: p.Rule, severity: p.Severity, annotations: p.Object.Annotations})
	}
	if len(metas) != len(full) {
		t.Fatalf("%d metas, %d policies", len(metas), len(full))
	}
	for i := range full {
		if !reflect.DeepEqual(metas[i], full[i]) {
			t.Errorf("metadata of %s differs from the parsed policy's:\n%+v\n%+v", full[i].name, metas[i], full[i])
		}
	}
	if got, want := Rules(), rulesOf(full); !reflect.DeepEqual(got, want) {
		t.Errorf("Rules() differs from the rules of the parsed policies")
	}
	specFirst := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nspec:\n  failurePolicy: Ignore\nmetadata:\n  name: x\n  annotations: {kiln.dev/rule: a/b, kiln.dev/severity: error}\n"
	if _, err := metaOf("x.yaml", []byte(specFirst)); err == nil || !strings.Contains(err.Error(), "no metadata.name before spec") {
		t.Errorf("spec before metadata: %v", err)
	}
	if m, err := metaOf("x.yaml", []byte(strings.Replace(specFirst, "spec:\n  failurePolicy: Ignore\n", "", 1))); err != nil || m.name != "x" || m.rule != "a/b" || m.severity != rules.Error {
		t.Errorf("metadata only: %+v, %v", m, err)
	}
}
