package lint_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

const forbidPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-forbidden-name}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  validations:
  - expression: "object.metadata.name != params.data.forbidden"
    message: forbidden name
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: first}
spec:
  policyName: no-forbidden-name
  validationActions: [Deny]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
`

// TestParamsOfPolicyFiles: the params that the bindings of --policy files
// name are read from the input with the context, and those that the input's
// own bindings name too (in a second scan).
func TestParamsOfPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	policy := write("policy.yaml", forbidPolicy)
	objects := write("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: default}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: good, namespace: default}\n")
	params := write("z.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: default}\ndata: {forbidden: bad}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: allowlist, namespace: default}\ndata: {forbidden: good}\n")
	second := write("binding.yaml", "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: second}\nspec:\n  policyName: no-forbidden-name\n  validationActions: [Deny]\n  paramRef: {name: allowlist, namespace: default, parameterNotFoundAction: Deny}\n")
	for _, tc := range []struct {
		name   string
		files  []string
		denied []string
	}{
		{"bindings in the policy files only", []string{objects, params}, []string{"bad"}},
		{"a binding in the input names another param", []string{objects, params, second}, []string{"bad", "good"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := rules.DefaultOptions()
			opts.Policies = []string{policy}
			out, err := lint.Run(&rules.Engine{Checkers: checkers.All(), Options: opts}, lint.Input{Files: tc.files}, false)
			if err != nil {
				t.Fatal(err)
			}
			var denied []string
			out.Result.Each(func(f rules.Finding) error {
				if f.Rule == "policy/no-forbidden-name" {
					denied = append(denied, f.Object.Name)
				}
				return nil
			})
			slices.Sort(denied)
			if !slices.Equal(denied, tc.denied) {
				t.Errorf("denied %v, want %v:\n%s", denied, tc.denied, describe(out.Result))
			}
		})
	}
}
