package policies

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// TestTemplatesHelperMatchesPodTemplatesOf: the shared CEL variables
// helpers/templates.yaml and helpers/containers.yaml find the pod
// templates manifest.PodTemplatesOf finds, at the same pod spec paths, and
// their init containers then containers, for every workload kind.
func TestTemplatesHelperMatchesPodTemplatesOf(t *testing.T) {
	policy, err := expandHelpers("probe.yaml", []byte(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: probe}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], operations: [CREATE]}
  variables:
    # kiln:include helpers/templates.yaml
    # kiln:include helpers/containers.yaml
  validations:
  - expression: "false"
    messageExpression: "'paths=' + variables.templates.map(t, t.path).join(',') + ';' + variables.containers.map(cs, cs.map(c, c.path).join(',')).join(',')"
`))
	if err != nil {
		t.Fatal(err)
	}
	pobjs, errs := manifest.Parse("probe.yaml", policy)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	e := cel.New(pobjs, nil, cel.Options{DefaultActions: []admissionv1.ValidationAction{admissionv1.Deny}})
	if setup := e.Setup(); len(setup) > 0 {
		t.Fatalf("probe policy: %v", setup[0].Message)
	}
	podSpec := "spec: {initContainers: [{name: i, image: x}], containers: [{name: a, image: x}, {name: b, image: x}]}"
	workloads := map[string]string{
		"Pod":                   "apiVersion: v1\nkind: Pod\nmetadata: {name: w}\n" + podSpec,
		"PodTemplate":           "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: w}\ntemplate: {" + podSpec + "}",
		"Deployment":            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec: {template: {" + podSpec + "}}",
		"ReplicaSet":            "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: w}\nspec: {template: {" + podSpec + "}}",
		"StatefulSet":           "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: w}\nspec: {template: {" + podSpec + "}}",
		"DaemonSet":             "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: w}\nspec: {template: {" + podSpec + "}}",
		"ReplicationController": "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: w}\nspec: {template: {" + podSpec + "}}",
		"Job":                   "apiVersion: batch/v1\nkind: Job\nmetadata: {name: w}\nspec: {template: {" + podSpec + "}}",
		"CronJob":               "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: w}\nspec: {jobTemplate: {spec: {template: {" + podSpec + "}}}}",
		"JobSet": "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: w}\nspec:\n  replicatedJobs:\n" +
			"  - {name: a, template: {spec: {template: {" + podSpec + "}}}}\n  - {name: b, template: {spec: {template: {" + podSpec + "}}}}",
	}
	for kind, src := range workloads {
		objs, errs := manifest.Parse(kind+".yaml", []byte(src))
		if len(errs) > 0 {
			t.Fatalf("%s: %v", kind, errs)
		}
		var want, wantContainers []string
		for _, pt := range manifest.PodTemplatesOf(objs[0]) {
			want = append(want, pt.SpecPath())
			wantContainers = append(wantContainers, pt.SpecPath()+".initContainers[0]", pt.SpecPath()+".containers[0]", pt.SpecPath()+".containers[1]")
		}
		if len(want) == 0 {
			t.Fatalf("%s: PodTemplatesOf finds no template", kind)
		}
		ds := e.EvaluateObject(objs[0])
		if len(ds) != 1 {
			t.Fatalf("%s: %d diagnostics, want 1: %v", kind, len(ds), ds)
		}
		_, got, _ := strings.Cut(ds[0].Message, "paths=")
		if w := strings.Join(want, ",") + ";" + strings.Join(wantContainers, ","); got != w {
			t.Errorf("%s: the CEL helper finds %q, PodTemplatesOf %q", kind, got, w)
		}
	}
}
