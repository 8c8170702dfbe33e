package cel

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

const fastMatchPolicies = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: object-only}
spec:
  failurePolicy: Ignore
  matchConstraints: {resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}]}
  matchConditions:
    - name: labelled
      expression: "'team' in object.metadata.?labels.orValue({})"
    - name: many-replicas
      expression: "object.spec.replicas > 2"
  validations: [{expression: "object.metadata.labels.team != 'none'"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: reads-request}
spec:
  failurePolicy: Ignore
  matchConstraints: {resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}]}
  matchConditions:
    - name: not-system
      expression: "!request.userInfo.username.startsWith('system:') && object.kind != 'Secret'"
  validations: [{expression: "object.kind != 'ConfigMap'", message: "no ConfigMaps"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: reads-variables}
spec:
  failurePolicy: Ignore
  matchConstraints: {resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}]}
  variables: [{name: kind, expression: "object.kind"}]
  matchConditions:
    - name: deployments
      expression: "variables.kind == 'Deployment'"
  validations: [{expression: "false", message: "every Deployment"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: with-params}
spec:
  failurePolicy: Ignore
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints: {resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}]}
  matchConditions:
    - name: listed-kind
      expression: "object.kind in params.data.kinds.split(',')"
  validations: [{expression: "false", message: "listed kind"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: fail-policy}
spec:
  failurePolicy: Fail
  matchConstraints: {resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}]}
  matchConditions:
    - name: many-replicas
      expression: "object.spec.replicas > 2"
  validations: [{expression: "false", message: "many replicas"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kinds, namespace: default}
data: {kinds: "Deployment,Service"}
`

const fastMatchObjects = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, labels: {team: none}}
spec: {replicas: 5}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: small, labels: {team: a}}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: unlabelled}
spec: {replicas: 9}
---
apiVersion: v1
kind: Service
metadata: {name: svc, labels: {team: none}}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
`

// TestFastMatchConditionsChangeNothing compares every finding with the fast
// matchConditions path and without it, on policies built to exercise it
// (object-only conditions, conditions that read request or variables, params,
// a condition that errors, failurePolicy Fail) and on the package's cases.
func TestFastMatchConditionsChangeNothing(t *testing.T) {
	bindings := ""
	for _, n := range []string{"object-only", "reads-request", "reads-variables", "fail-policy"} {
		bindings += fmt.Sprintf("---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: %s}\nspec: {policyName: %s, validationActions: [Deny]}\n", n, n)
	}
	bindings += "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: with-params}\nspec: {policyName: with-params, validationActions: [Deny], paramRef: {name: kinds, namespace: default, parameterNotFoundAction: Deny}}\n"
	streams := map[string]string{"built": fastMatchPolicies + bindings + "---\n" + fastMatchObjects}
	files, _ := filepath.Glob("testdata/docs/*.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		streams[f] = string(b)
	}
	fast := 0
	for name, src := range streams {
		objs, errs := manifest.Parse(name, []byte(src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		e := New(objs, objs, Options{})
		slow := New(objs, objs, Options{})
		for _, p := range slow.policies {
			p.fastMatch = nil
		}
		for _, p := range e.policies {
			fast += len(p.fastMatch)
		}
		got, want := e.Evaluate(objs), slow.Evaluate(objs)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: findings differ with fast matchConditions:\n got %v\nwant %v", name, got, want)
		}
		if name == "built" && len(want) < 3 {
			t.Errorf("built: only %d findings: %v", len(want), want)
		}
	}
	// object-only (2), reads-request (1: request is declared, the activation
	// lacks it, so it falls back), with-params (1); not reads-variables
	// (variables are not declared) nor fail-policy.
	if fast != 4 {
		t.Errorf("%d fast conditions compiled, want 4", fast)
	}
}
