package cel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// benchPolicies are 10 policies of the kinds users write, each with a Deny binding.
var benchPolicies = []string{
	`object.spec.replicas <= 50`,
	`has(object.metadata.labels) && 'app' in object.metadata.labels`,
	`object.spec.template.spec.containers.all(c, !c.image.endsWith(':latest'))`,
	`object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits)`,
	`object.spec.template.spec.containers.all(c, quantity(c.resources.limits.memory).isLessThan(quantity('4Gi')))`,
	`!has(object.spec.template.spec.hostNetwork) || !object.spec.template.spec.hostNetwork`,
	`object.spec.template.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.runAsNonRoot) && c.securityContext.runAsNonRoot)`,
	`object.metadata.name.matches('^[a-z0-9-]+$')`,
	`object.spec.template.spec.containers.all(c, c.image.startsWith('registry.example.com/'))`,
	`object.metadata.namespace != 'default'`,
}

func benchObjects(b *testing.B, n int) (policies, objs []*manifest.Object) {
	var sb strings.Builder
	for i, expr := range benchPolicies {
		fmt.Fprintf(&sb, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-%d}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"]}
  validations:
  - expression: %q
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bench-%d}
spec:
  policyName: bench-%d
  validationActions: [Deny]
---
`, i, expr, i, i)
	}
	policies, errs := manifest.Parse("policies.yaml", []byte(sb.String()))
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	sb.Reset()
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-%d
  namespace: ns-%d
  labels: {app: web-%d}
spec:
  replicas: %d
  selector: {matchLabels: {app: web-%d}}
  template:
    metadata: {labels: {app: web-%d}}
    spec:
      containers:
      - name: app
        image: registry.example.com/web:1.%d
        resources: {limits: {memory: 512Mi, cpu: 500m}}
        securityContext: {runAsNonRoot: true, allowPrivilegeEscalation: false}
      - name: sidecar
        image: docker.io/envoy:latest
        resources: {limits: {memory: 128Mi}}
---
`, i, i%20, i, i%100, i, i, i)
	}
	objs, errs = manifest.Parse("deployments.yaml", []byte(sb.String()))
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	return policies, objs
}

// BenchmarkCEL evaluates 10 policies (one binding each) against 10,000
// Deployments; evals/s counts binding × object evaluations.
func BenchmarkCEL(b *testing.B) {
	policies, objs := benchObjects(b, 10000)
	e := New(policies, append(policies, objs...), Options{})
	if e.Bindings() != 10 {
		b.Fatalf("bindings = %d, want 10", e.Bindings())
	}
	for _, o := range objs { // decode once, as the linter's other checkers would have
		if _, err := o.Content(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var findings int
	for i := 0; i < b.N; i++ {
		findings = len(e.Evaluate(objs))
	}
	b.StopTimer()
	evals := float64(e.Bindings() * len(objs) * b.N)
	b.ReportMetric(evals/b.Elapsed().Seconds(), "evals/s")
	b.ReportMetric(float64(findings), "findings")
}

// BenchmarkParseDeployments is BenchmarkCEL's input alone (generating and
// parsing 10,000 Deployments), to tell the engine's memory from the input's.
func BenchmarkParseDeployments(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_, objs := benchObjects(b, 10000)
		for _, o := range objs {
			if _, err := o.Content(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
