package cel

import (
	"fmt"
	"strings"
	"testing"

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
	eng := &rules.Engine{Checkers: []*rules.Checker{{Name: "cel", Run: run}}, Options: opts}
	res, err := eng.Run(objs, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var out []string
	for _, f := range res.Findings {
		out = append(out, fmt.Sprintf("%d %s %s: %s", f.Pos.Line, f.Severity, f.Rule, f.Message))
	}
	return out
}

func check(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func TestSmoke(t *testing.T) {
	got := lint(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: demo-policy.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: demo-binding-test.example.com
spec:
  policyName: demo-policy.example.com
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: test
---
apiVersion: v1
kind: Namespace
metadata:
  name: test
  labels: {environment: test}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: test}
spec:
  replicas: 6
`, nil)
	check(t, got, nil)
}
