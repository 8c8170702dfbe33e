package policytest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules/policies"
)

// statuses returns "case=status" for every result, in order.
func statuses(rep *report.TestRun) []string {
	var out []string
	for _, r := range rep.Cases {
		out = append(out, r.Case+"="+string(r.Status))
	}
	return out
}

// TestDocsExample: docs/policies.md's kiln test example is
// testdata/readme, and passes.
func TestDocsExample(t *testing.T) {
	readme, err := os.ReadFile("../../docs/policies.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/readme/kiln-test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, want) {
		t.Errorf("docs/policies.md's kiln test example is not testdata/readme/kiln-test.yaml: keep them the same")
	}
	rep := RunPaths([]string{"testdata/readme"})
	if len(rep.Errors) > 0 || len(rep.Cases) != 7 || !rep.Passed() {
		t.Fatalf("README example: errors %v, results %v", rep.Errors, statuses(rep))
	}
}

// TestBuiltinSuites runs the suites of kiln's built-in policies
// (rules/*/policies/tests) and checks that every policy has one, with a
// denied and an allowed case.
func TestBuiltinSuites(t *testing.T) {
	rep := RunPaths([]string{"../../rules"})
	if len(rep.Errors) > 0 {
		t.Fatalf("broken suites: %v", rep.Errors)
	}
	for _, r := range rep.Cases {
		if r.Status != report.TestPass {
			t.Errorf("%s: %s: %s (expected %s, got %s)", r.Pos, r.Case, r.Message, r.Expected, r.Got)
		}
	}
	covered := map[string]map[Outcome]bool{}
	for _, f := range rep.Files {
		s, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range s.Builtin {
			if o.Kind != "ValidatingAdmissionPolicy" {
				continue
			}
			if covered[o.Name] == nil {
				covered[o.Name] = map[Outcome]bool{}
			}
			for _, c := range s.Cases {
				covered[o.Name][c.Expect.Outcome] = true
			}
		}
	}
	for _, p := range policies.All() {
		if !covered[p.Name][Denied] || !covered[p.Name][Allowed] {
			t.Errorf("built-in policy %s: want a suite under rules/*/policies/tests with a denied and an allowed case (have %v)", p.Name, covered[p.Name])
		}
	}
}

func TestKyverno(t *testing.T) {
	rep := RunPaths([]string{"testdata/kyverno/vap"})
	want := []string{
		"check-deployment-replicas pass Deployment/deployment-pass=pass",
		"check-deployment-replicas fail Deployment/staging-ns/deployment-fail=pass",
		"check-deployment-replicas skip Deployment/prod-ns/deployment-skip=pass", // resourceSpecs
		// No binding: bound by the test file, as Kyverno does.
		"disallow-host-path fail Deployment/deployment-fail=pass",
		// A Warn binding under the test's userinfo.
		"require-owner fail Deployment/deployment-pass=pass",
	}
	if got := statuses(rep); strings.Join(got, "\n") != strings.Join(want, "\n") || len(rep.Errors) > 0 {
		t.Errorf("kyverno vap: errors %v\ngot  %q\nwant %q", rep.Errors, got, want)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, n := range []string{"result 6 (policy require-latest-tag) is for one of Kyverno's own policies: not run", `"disallow-host-path" is admissionregistration.k8s.io/v1beta1: served by Kubernetes 1.28 to 1.33 only when`} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}

	// A mutation (the admission stage's mutating admission): the
	// patchedResources match, and a patchedResources the policy does not
	// produce fails.
	rep = RunPaths([]string{"testdata/kyverno/map"})
	if got := statuses(rep); len(got) != 1 || !strings.HasSuffix(got[0], "=pass") || !rep.Passed() {
		t.Errorf("with admit/mutate: %v %v", got, rep.Cases)
	}
	dir := t.TempDir()
	for _, f := range []string{"kyverno-test.yaml", "policy.yaml", "resources.yaml", "patched.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata/kyverno/map", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "patched.yaml" {
			data = bytes.ReplaceAll(data, []byte("team: platform"), []byte("team: storefront"))
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep = RunPaths([]string{dir})
	if got := statuses(rep); len(got) != 1 || !strings.HasSuffix(got[0], "=fail") || !strings.Contains(rep.Cases[0].Message, "expected storefront, got platform") {
		t.Errorf("with admit/mutate and a wrong patchedResources: %v %v", got, rep.Cases)
	}
}

// TestKyvernoShapes runs Kyverno's format on a fixture of each shape a
// Kyverno suite holds that the API server would not run as written: each
// passes, as under kyverno test, and says what a cluster would need.
func TestKyvernoShapes(t *testing.T) {
	tests := []struct {
		dir      string
		cases    []string
		notes    []string
		warnings []string
	}{
		{"unbound", []string{
			"disallow-host-path fail Pod/host-pod=pass",
			"disallow-host-path pass Pod/plain-pod=pass",
			"add-team-label pass ConfigMap/settings=pass",
		}, []string{`ValidatingAdmissionPolicy "disallow-host-path" (testdata/kyverno/unbound/policy.yaml:1:1), MutatingAdmissionPolicy "add-team-label" (testdata/kyverno/unbound/policy.yaml:17:1): no binding among the test's policies; kiln binds each to the test's resources`}, nil},
		{"refused", []string{
			"namespace-prefix fail Namespace/team-a=pass",
			"namespace-prefix pass Namespace/valid-team-b=pass",
			"max-replicas fail Deployment/big=pass",
			"max-replicas pass Deployment/small=pass",
		}, nil, []string{
			`testdata/kyverno/refused/policy.yaml:1:1: the API server refuses ValidatingAdmissionPolicy "namespace-prefix" as written (spec.matchConstraints.resourceRules[0].operations: Required value); kiln runs the cases with spec.matchConstraints.resourceRules[0].operations ["*"]`,
			`testdata/kyverno/refused/policy.yaml:15:1: the API server refuses ValidatingAdmissionPolicyBinding "namespace-prefix" as written (spec.validationActions: Required value); kiln runs the cases with spec.validationActions [Deny]`,
			`testdata/kyverno/refused/policy.yaml:41:1: the API server refuses ValidatingAdmissionPolicyBinding "max-replicas" as written (spec.paramRef.parameterNotFoundAction: Required value); kiln runs the cases with spec.paramRef.parameterNotFoundAction Deny`,
			`testdata/kyverno/refused/params.yaml:1:1: the API server refuses ConfigMap "replica-limits" as written (data.maxReplicas must be a string, not a number`,
		}},
		{"allnames", []string{
			"require-team-label fail Deployment/default/api=pass",
			"require-team-label fail Deployment/default/worker=pass",
			"require-team-label pass StatefulSet/default/store=pass",
			"set-owner pass Service/default/web=pass",
			"set-owner pass Service/default/db=pass",
		}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			rep := RunPaths([]string{"testdata/kyverno/" + tt.dir})
			if got := statuses(rep); strings.Join(got, "\n") != strings.Join(tt.cases, "\n") || len(rep.Errors) > 0 {
				t.Errorf("errors %v\ngot  %q\nwant %q", rep.Errors, got, tt.cases)
			}
			notes := strings.Join(rep.Notes, "\n")
			for _, n := range tt.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes lack %q:\n%s", n, notes)
				}
			}
			if len(rep.Warnings) != len(tt.warnings) {
				t.Errorf("warnings %q, want %d", rep.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if i < len(rep.Warnings) && !strings.HasPrefix(rep.Warnings[i], w) {
					t.Errorf("warning %d:\n got %s\nwant %s…", i, rep.Warnings[i], w)
				}
			}
		})
	}
}

// TestMutations runs testdata/mutation (kiln's format) through the
// admission stage: each case's status and what its message must say.
func TestMutations(t *testing.T) {
	rep := RunPaths([]string{"testdata/mutation"})
	if len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	want := []struct {
		status  report.TestStatus
		message string
	}{
		{report.TestPass, ""}, // the label is added before validation
		{report.TestFail, "admitted object: metadata.labels.team: expected storefront, got platform"},
		{report.TestPass, "ValidatingAdmissionPolicy 'team-label' with binding 'team-label' denied request"}, // the robot: not mutated
		{report.TestPass, ""}, // UPDATE: oldObject read
		{report.TestPass, "policy 'replace-owner' with binding 'replace-owner' denied request: JSON Patch: replace operation does not apply"},
		{report.TestError, `cannot evaluate mutations: MutatingAdmissionPolicy "widget-size" matches Widget, a custom resource`},
		{report.TestPass, `the API server refuses Service/default/web as MutatingAdmissionPolicies changed it: metadata.labels: Invalid value: "not valid!"`},
	}
	if len(rep.Cases) != len(want) {
		t.Fatalf("%d results, want %d: %v", len(rep.Cases), len(want), statuses(rep))
	}
	for i, w := range want {
		r := rep.Cases[i]
		if r.Status != w.status || !strings.Contains(r.Message, w.message) {
			t.Errorf("%s: %s %q, want %s with %q", r.Case, r.Status, r.Message, w.status, w.message)
		}
	}
}

// TestOutputs runs a suite with passing and failing cases through every
// format (goldens under testdata/outputs).
func TestOutputs(t *testing.T) {
	rep := RunPaths([]string{"testdata/outputs/kiln-test.yaml"})
	if rep.Passed() || len(rep.Errors) > 0 {
		t.Errorf("passed %v with errors %v, want a failed case and no broken file", rep.Passed(), rep.Errors)
	}
	for _, format := range report.TestFormats {
		var buf bytes.Buffer
		if err := report.WriteTests(&buf, format, rep); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata/outputs", "out."+format+".golden"), buf.Bytes())
	}
}

// TestBrokenFiles checks that each broken test file is an error at its line.
func TestBrokenFiles(t *testing.T) {
	head := "apiVersion: kiln.dev/v1alpha1\nkind: PolicyTest\nresources: [objects.yaml]\n"
	tests := []struct{ name, file, want string }{
		{"unknown key", head + "cases: []\npolicy: [x]\n", `kiln-test.yaml:5:1: unknown key "policy" in a test file`},
		{"no cases", head + "cases: []\n", "kiln-test.yaml:4:8: cases must be a non-empty list"},
		{"wrong kind", "apiVersion: kiln.dev/v1alpha1\nkind: Test2\ncases: []\n", "kiln-test.yaml:2:7: kind must be PolicyTest"},
		{"unknown result", head + "cases:\n  - name: a\n    object: web\n    expect: {result: blocked}\n", `kiln-test.yaml:7:22: result "blocked": use one of allowed, denied, warned`},
		{"missing object", head + "cases:\n  - name: a\n    object: nope\n    expect: {result: allowed}\n", `kiln-test.yaml:6:13: object "nope" is not among the resources (Pod/web)`},
		{"update without old", head + "cases:\n  - name: a\n    operation: UPDATE\n    object: web\n    expect: {result: allowed}\n", "kiln-test.yaml:5:5: an UPDATE case needs object and oldObject"},
		{"bad operation", head + "cases:\n  - name: a\n    operation: PATCH\n    object: web\n    expect: {result: allowed}\n", `kiln-test.yaml:6:16: operation "PATCH": use one of CREATE, DELETE, UPDATE`},
		{"duplicate key", head + "cases:\n  - name: a\n    name: b\n", `kiln-test.yaml:6:5: duplicate key "name" (first at line 5)`},
		{"missing file", "apiVersion: kiln.dev/v1alpha1\nkind: PolicyTest\npolicies: [nope.yaml]\ncases: []\n", "kiln-test.yaml:3:12: cannot read nope.yaml: no such file or directory"},
		{"allowed with message", head + "cases:\n  - name: a\n    object: web\n    expect: {result: allowed, message: x}\n", "kiln-test.yaml:7:14: result allowed takes no policy or message"},
		{"unknown builtin", head + "builtinPolicies: [kiln-nope]\ncases: []\n", `kiln-test.yaml:4:19: builtinPolicies: kiln has no built-in policy "kiln-nope"`},
		{"kyverno unknown key", "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nresults: []\nresult: []\n", `kyverno-test.yaml:4:1: unknown key "result" in a Kyverno test`},
		{"kyverno bad result", "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nresources: [objects.yaml]\nresults:\n  - policy: p\n    isValidatingAdmissionPolicy: true\n    kind: Pod\n    resources: [web]\n    result: ok\n", `kyverno-test.yaml:9:13: result "ok": use one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			name := "kiln-test.yaml"
			if strings.Contains(tt.file, "kyverno") {
				name = "kyverno-test.yaml"
			}
			os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a, image: a}]}\n"), 0o644)
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := RunPaths([]string{dir})
			if len(rep.Errors) != 1 {
				t.Fatalf("errors %v, results %v", rep.Errors, statuses(rep))
			}
			got := strings.ReplaceAll(rep.Errors[0].Error(), dir+string(filepath.Separator), "")
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %s\nwant %s…", got, tt.want)
			}
		})
	}
}
