package vapcompat

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/policies"
)

func parse(t *testing.T, src string) []*manifest.Object {
	t.Helper()
	objs, errs := manifest.Parse("p.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}

// policy is a ValidatingAdmissionPolicy with one validation expression (and
// a variable when variable is set).
func policy(apiVersion, variable, expression string) string {
	s := "apiVersion: " + apiVersion + `
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
`
	if variable != "" {
		s += "  variables: [{name: v, expression: '" + variable + "'}]\n"
	}
	return s + "  validations: [{expression: '" + expression + "'}]\n"
}

// TestOldest: the oldest release whose API server creates a policy is the
// first that serves its API version and has every CEL library it uses in
// the environment of its compatibility version (one minor below).
func TestOldest(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string // want "" for none
	}{
		{"plain v1", policy("admissionregistration.k8s.io/v1", "", "object.spec.replicas <= 5"), "1.30"},
		{"v1beta1 is served off by default", policy("admissionregistration.k8s.io/v1beta1", "", "object.spec.replicas <= 5"), ""},
		{"two-variable comprehension (CEL 1.32)", policy("admissionregistration.k8s.io/v1", "", "object.metadata.labels.all(k, v, v != \"\")"), "1.33"},
		{"in a variable", policy("admissionregistration.k8s.io/v1", "object.metadata.labels.exists(k, v, v == \"x\")", "!variables.v"), "1.33"},
		{"semver (CEL 1.33)", policy("admissionregistration.k8s.io/v1", "", "isSemver(\"1.2.3\")"), "1.34"},
		{"syntax error", policy("admissionregistration.k8s.io/v1", "", "object.spec.replicas <="), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Oldest(manifest.OldestKube, manifest.LatestKube, parse(t, tt.src))
			s := ""
			if ok {
				s = got.String()
			}
			if s != tt.want {
				t.Errorf("oldest = %q, want %q; problems at %s: %v", s, tt.want, manifest.LatestKube, Check(manifest.LatestKube, parse(t, tt.src)))
			}
		})
	}
}

// TestKilnPolicies: kiln's built-in policies need Kubernetes 1.33 (their
// two-variable comprehensions), as docs/policies.md's policies export section says;
// at 1.32 the problems name a policy, a field and the CEL error.
func TestKilnPolicies(t *testing.T) {
	var objs []*manifest.Object
	for _, p := range policies.All() {
		objs = append(objs, p.Object)
	}
	if got, ok := Oldest(manifest.OldestKube, manifest.LatestKube, objs); !ok || got.String() != "1.33" {
		t.Errorf("oldest release for kiln's policies = %v (%v), want 1.33", got, ok)
	}
	if ps := Check(manifest.LatestKube, objs); len(ps) > 0 {
		t.Errorf("at %s: %v", manifest.LatestKube, ps)
	}
	ps := Check(manifest.KubeVersion{Major: 1, Minor: 32}, objs)
	if len(ps) == 0 || !strings.HasPrefix(ps[0].String(), "kiln-") || !strings.Contains(ps[0].Field, "expression") {
		t.Errorf("at 1.32: %v, want problems naming kiln's policies and fields", ps)
	}
	ps = Check(manifest.KubeVersion{Major: 1, Minor: 29}, objs)
	if len(ps) != len(objs) || !strings.Contains(ps[0].Msg, "does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy") {
		t.Errorf("at 1.29: %v, want every policy unserved", ps)
	}
}
