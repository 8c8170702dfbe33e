package cel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// compileOnMatchInput: one policy for Deployments, one for ConfigMaps (whose
// expression would not even compile), one for Deployments whose prefilter
// (matchConditions) the Deployment fails, and a Deployment that fails the
// first.
const compileOnMatchInput = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: big}
spec:
  failurePolicy: Ignore
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  matchConditions: [{name: big, expression: "object.spec.replicas > 5"}]
  validations: [{expression: "object.spec.replicas <= 10", message: too big}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= 2", message: too many}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: configmaps}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  validations: [{expression: "object.data.size( > 0"}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx}]}
`

// TestCompileOnMatch: with CompileOnMatch an engine compiles only the
// policies an evaluated object matched, reports the same denials as an
// engine that compiled everything up front, and leaves compile problems
// out of Setup; a policy whose prefilter the object fails compiles its
// matchConditions only. (Run with -race: the two Deployment policies
// compile concurrently.)
func TestCompileOnMatch(t *testing.T) {
	objs, errs := manifest.Parse("test.yaml", []byte(compileOnMatchInput))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	deny := []admissionv1.ValidationAction{admissionv1.Deny}
	findings := func(e *Engine) string {
		var out []string
		for _, d := range e.EvaluateObject(objs[3]) {
			out = append(out, fmt.Sprintf("%s %s %s", d.Rule, d.Severity, d.Message))
		}
		return strings.Join(out, "\n")
	}
	eager := New(objs[:3], objs, Options{DefaultActions: deny})
	lazy := New(objs[:3], objs, Options{DefaultActions: deny, CompileOnMatch: true})
	if len(eager.Setup()) != 1 || len(lazy.Setup()) != 0 {
		t.Errorf("setup: eager %v, lazy %v; want the configmaps compile error only eagerly", eager.Setup(), lazy.Setup())
	}
	compiled := func(e *Engine) map[string]bool {
		out := map[string]bool{}
		for _, p := range e.policies {
			out[p.name] = p.validator != nil
		}
		return out
	}
	if c := compiled(lazy); c["replicas"] || c["configmaps"] || c["big"] {
		t.Errorf("compiled before any evaluation: %v", c)
	}
	want, got := findings(eager), findings(lazy)
	if want == "" || got != want {
		t.Errorf("lazy findings:\n%s\nwant (eager):\n%s", got, want)
	}
	if c := compiled(lazy); !c["replicas"] || c["configmaps"] || c["big"] {
		t.Errorf("after a Deployment: compiled %v, want replicas only (big's prefilter is false)", c)
	}
	// Every Deployment policy's prefilter has been compiled (big's, and
	// replicas' empty one), the ConfigMap policy's not.
	for _, p := range lazy.policies {
		if p.fastDone.Load() != (p.name != "configmaps") {
			t.Errorf("%s: prefilter compiled %v", p.name, p.fastDone.Load())
		}
	}
}
