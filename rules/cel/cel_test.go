package cel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/admit"
	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// lint runs the "cel" checker over a YAML stream and returns each finding as
// "line severity rule: message".
func lint(t *testing.T, src string, opts *rules.Options) []string {
	t.Helper()
	objs, errs := manifest.Parse("test.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}
	if opts == nil {
		opts = rules.DefaultOptions()
	}
	res, err := engine(opts).Run(objs, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var out []string
	for _, f := range res.Findings {
		out = append(out, fmt.Sprintf("%d %s %s: %s", f.Pos.Line, f.Severity, f.Rule, f.Message))
	}
	return out
}

// engine runs the "cel" and "unknown-kind" checkers, with the --policy
// files of opts read and admitted as kiln lint reads and admits them
// (package lint, which imports this one through the admission stage).
func engine(opts *rules.Options) *rules.Engine {
	cel := &rules.Checker{Name: "cel", Prepare: prepare, Requires: requires}
	return &rules.Engine{Checkers: []*rules.Checker{cel, UnknownKind}, Options: opts, Given: admittedPolicies(opts)}
}

// admittedPolicies returns an Engine.Given of the --policy files of opts,
// each object admitted.
func admittedPolicies(opts *rules.Options) func(rules.Context) ([]*manifest.Object, []error) {
	return func(c rules.Context) ([]*manifest.Object, []error) {
		if c != rules.Policies || len(opts.Policies) == 0 {
			return nil, nil
		}
		files, errs := manifest.Expand(opts.Policies)
		var objs []*manifest.Object
		for _, f := range files {
			data, name, err := manifest.ReadBytes(f, nil)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			o, _, perrs := manifest.ParseSkipping(name, data)
			objs, errs = append(objs, o...), append(errs, perrs...)
		}
		kinds := manifest.BuiltinKinds()
		kinds.AddCRDs(objs)
		a := admit.New(objs, kinds, admit.Options{KubeVersion: opts.KubeVersion, User: opts.User, Groups: opts.Groups})
		for _, o := range objs {
			a.Admit(o)
		}
		return objs, errs
	}
}

func check(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestFiles runs each testdata file (modelled on the examples of the
// Kubernetes ValidatingAdmissionPolicy documentation, plus one file per
// matching knob) and compares every finding: line, severity, rule, message.
func TestFiles(t *testing.T) {
	for _, c := range fileCases {
		t.Run(c.name, func(t *testing.T) {
			if c.slow && testing.Short() {
				t.Skip("slow: run without -short")
			}
			want, ok := wantFindings[c.name]
			if !ok {
				t.Fatalf("no expectation for %s", c.name)
			}
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			check(t, lint(t, string(data), c.opts), want)
		})
	}
}

// TestUnknownKindOncePerKind: the note on a kind the policies can only
// guess comes once per kind, at its first object, and only when a policy
// matches the guessed resource.
func TestUnknownKindOncePerKind(t *testing.T) {
	policy := func(resources string) string {
		return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: named}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: [` + resources + `]}]
  validations: [{expression: "true"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: named}
spec: {policyName: named, validationActions: [Deny]}
`
	}
	widgets := "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a, namespace: x}\n" +
		"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: b, namespace: x}\n" +
		"---\napiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: c, namespace: x}\n"
	const guess = `policies see it as resource %q (namespaced), a guess`
	check(t, lint(t, policy(`"*"`)+widgets, nil), []string{
		"15 warning policy/unknown-kind: kind Widget.example.com is neither built in nor defined by a CustomResourceDefinition in the input; " + fmt.Sprintf(guess, "widgets") + " (said once for the 2 objects of this kind)",
		"23 warning policy/unknown-kind: kind Gadget.example.com is neither built in nor defined by a CustomResourceDefinition in the input; " + fmt.Sprintf(guess, "gadgets"),
	})
	check(t, lint(t, policy("configmaps")+widgets, nil), nil)
}
