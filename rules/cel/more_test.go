package cel

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

const pods = `apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: shop}
spec:
  containers: [{name: app, image: "nginx:1.27"}]
---
apiVersion: v1
kind: Pod
metadata: {name: floating, namespace: shop}
spec:
  containers: [{name: app, image: "nginx:latest"}]
`

// TestPolicyFlag: policies under --policy apply to the input; findings land
// on the input objects.
func TestPolicyFlag(t *testing.T) {
	opts := withOpts(func(o *rules.Options) { o.Policies = []string{"testdata/policies"} })
	check(t, lint(t, pods, opts), []string{
		"7 error policy/no-latest: ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest' denied request: images must be pinned",
	})
}

// TestPolicyFlagUnservedVersion: a v1beta1 policy is a beta API added in
// 1.28, which no release serves by default: the server refuses to create
// it, so it denies nothing.
func TestPolicyFlagUnservedVersion(t *testing.T) {
	opts := withOpts(func(o *rules.Options) { o.Policies = []string{"testdata/policies-v1beta1"} })
	check(t, lint(t, pods, opts), nil)
}

func TestPolicyFlagUnreadable(t *testing.T) {
	objs, _ := manifest.Parse("pods.yaml", []byte(pods))
	opts := withOpts(func(o *rules.Options) { o.Policies = []string{"testdata/does-not-exist"} })
	_, err := engine(opts).Run(objs, nil)
	if err == nil || !strings.Contains(err.Error(), "cel: --policy: testdata/does-not-exist: cannot read") {
		t.Errorf("err = %v, want a --policy read error naming the path", err)
	}
}

// TestSetupProblems: problems in policies and bindings are findings at the
// offending field, and the runtime still behaves as the server would.
func TestSetupProblems(t *testing.T) {
	src := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: twice}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}]
  validations: [{expression: "true"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: twice}
spec:
  validations: [{expression: "false"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: shape}
spec: "not a mapping"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-constraints}
spec:
  validations: [{expression: "false"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-actions}
spec:
  policyName: twice
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-constraints}
spec: {policyName: no-constraints, validationActions: [Deny]}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: shop}
`
	check(t, lint(t, src, nil), []string{
		"11 error policy/twice: ValidatingAdmissionPolicy \"twice\" is defined twice (also at test.yaml:1:1); the later one would replace the earlier, so kiln ignores this one",
		"18 error policy/shape: ValidatingAdmissionPolicy \"shape\" does not decode as admissionregistration.k8s.io/v1: cannot unmarshal string into Go struct field ValidatingAdmissionPolicy.spec of type v1.ValidatingAdmissionPolicySpec; the API server would reject this policy",
		"23 error policy/no-constraints: ValidatingAdmissionPolicy \"no-constraints\" has no spec.matchConstraints (required); the API server would reject it",
		"29 error policy/twice: ValidatingAdmissionPolicyBinding \"no-actions\" has no spec.validationActions (required: Deny, Warn and/or Audit); the API server would reject it",
		"37 error policy/no-constraints: ValidatingAdmissionPolicy 'no-constraints' denied request: failed to configure policy: policy contained no match constraints, a required field",
	})
}

// TestNamespaceObject: a Namespace in the input is what namespaceObject
// shows (with the name label the server adds); a namespace that is not in
// the input is synthesized with that label only; a Namespace being created
// sees its own labels (plus the name label) and no namespaceObject.
func TestNamespaceObject(t *testing.T) {
	src := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: ns}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps", "namespaces"]}]
  validations:
  - expression: "false"
    messageExpression: "object.kind + ' ' + object.metadata.name + ': ' + (namespaceObject == null ? 'no namespaceObject' : namespaceObject.metadata.name + ' ' + namespaceObject.metadata.labels.map(k, k + '=' + namespaceObject.metadata.labels[k]).sort().join(',')) + ' / object labels ' + (has(object.metadata.labels) ? object.metadata.labels.map(k, k + '=' + object.metadata.labels[k]).sort().join(',') : '{}')"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: ns}
spec: {policyName: ns, validationActions: [Audit]}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {tier: web}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: in-shop, namespace: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: elsewhere, namespace: other}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: defaulted}
`
	got := lint(t, src, nil)
	for i := range got {
		got[i] = got[i][strings.Index(got[i], "'ns': ")+len("'ns': "):]
	}
	check(t, got, []string{
		"Namespace shop: no namespaceObject / object labels kubernetes.io/metadata.name=shop,tier=web",
		"ConfigMap in-shop: shop kubernetes.io/metadata.name=shop,tier=web / object labels {}",
		"ConfigMap elsewhere: other kubernetes.io/metadata.name=other / object labels {}",
		"ConfigMap defaulted: default kubernetes.io/metadata.name=default / object labels {}",
	})
}

// TestNewChecker: a fixed rule set written as policies, without bindings,
// bound by DefaultActions and reported under the caller's rule IDs.
func TestNewChecker(t *testing.T) {
	policies, errs := manifest.Parse("builtin.yaml", []byte(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-latest}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}]
  validations:
  - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
    messageExpression: "'container ' + object.spec.containers.filter(c, c.image.endsWith(':latest'))[0].name + ' uses a :latest image'"
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := NewChecker("builtin", policies, Options{
		RuleID:         func(name string) string { return "image/" + name },
		DefaultActions: []admissionv1.ValidationAction{admissionv1.Warn},
	})
	if len(c.Rules) != 1 || c.Rules[0].ID != "image/no-latest" {
		t.Fatalf("rules = %v, want image/no-latest", c.Rules)
	}
	objs, _ := manifest.Parse("pods.yaml", []byte(pods))
	res, err := (&rules.Engine{Checkers: []*rules.Checker{c}}).Run(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, f.Pos.String()+" "+f.Severity.String()+" "+f.Rule+": "+f.Message)
	}
	check(t, got, []string{
		"pods.yaml:7:1 warning image/no-latest: Validation failed for ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest': container app uses a :latest image",
	})
}

// TestExplain: the rules kiln explain shows for the policies in some files:
// one per policy, and the note the policies bring.
func TestExplain(t *testing.T) {
	set := manifest.Read([]string{"testdata/docs/params-crd.yaml", "testdata/docs/variables.yaml", "testdata/docs/audit-annotations.yaml"}, nil)
	if errs := set.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	rs := append(PolicyRules(set.Objects()), UnknownKindRule)
	sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("== " + r.ID + " (" + r.Severity.String() + ")\n" + r.Summary + "\n\n" + r.Doc + "\n")
	}
	golden.Check(t, "testdata/explain.golden", []byte(b.String()))
	if !strings.Contains(b.String(), "synthesizes one with only the label kubernetes.io/metadata.name") {
		t.Error("policy docs do not say that namespaceObject is synthesized")
	}
}

// FuzzLoad feeds arbitrary YAML streams through policy loading, compilation
// and evaluation against the stream's own objects: nothing may panic or hang.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, p := range files {
		if strings.HasSuffix(p, "/cost.yaml") {
			// Runs to the cost limit by design (seconds per input): it
			// would starve the fuzzer. TestFiles covers it.
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\nspec: {matchConstraints: {resourceRules: [{}]}, validations: [{}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _ := manifest.Parse("fuzz.yaml", data)
		e := New(objs, objs, Options{})
		declared := map[string]bool{}
		for _, r := range e.Rules() {
			declared[r.ID] = true
		}
		for _, d := range append(e.Setup(), e.Evaluate(objs)...) {
			if d.Rule == "" || d.Message == "" {
				t.Fatalf("diagnostic without rule or message: %+v", d)
			}
			if !declared[d.Rule] {
				t.Fatalf("diagnostic for undeclared rule %q", d.Rule)
			}
		}
	})
}
