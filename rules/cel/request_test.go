package cel

import (
	"fmt"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"k8s.io/apiserver/pkg/admission"
)

// TestEvaluateRequest checks the requests kiln lint never sends: UPDATE
// with oldObject, DELETE (object null), the user, groups and dry-run of the
// request, and that a policy whose matchConstraints have no selectors is
// matched per operation (its match cache).
func TestEvaluateRequest(t *testing.T) {
	policies := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
    - expression: oldObject == null || object.data.mode == oldObject.data.mode
      messageExpression: "'mode was ' + oldObject.data.mode"
  auditAnnotations:
    - {key: op, valueExpression: "request.operation + ' by ' + request.userInfo.username + ' ' + request.userInfo.groups.join(',') + ' dry-run ' + string(request.dryRun)"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: p}
spec: {policyName: p, validationActions: [Deny, Audit]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: d}
spec:
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [configmaps]}
  validations:
    - expression: object == null && oldObject.metadata.name == 'a'
      message: unexpected
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: d}
spec: {policyName: d, validationActions: [Warn]}
`
	objs, errs := manifest.Parse("policies.yaml", []byte(policies))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	e := New(objs, objs, Options{})
	if s := e.Setup(); len(s) > 0 {
		t.Fatal(s)
	}
	cm := func(mode string) *manifest.Object {
		o, errs := manifest.Parse("cm.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\ndata: {mode: "+mode+"}\n"))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return o[0]
	}
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"create", Request{Operation: admission.Create, Object: cm("a")},
			"[{AuditAnnotation p p   op CREATE by kiln:offline system:authenticated dry-run false}]"},
		{"update keeps the mode", Request{Operation: admission.Update, Object: cm("a"), OldObject: cm("a"), User: "bob", Groups: []string{"dev"}, DryRun: true},
			"[{AuditAnnotation p p   op UPDATE by bob dev dry-run true}]"},
		{"update changes the mode", Request{Operation: admission.Update, Object: cm("b"), OldObject: cm("a")},
			"[{Deny p p mode was a Invalid  } {Audit p p mode was a Invalid  } {AuditAnnotation p p   op UPDATE by kiln:offline system:authenticated dry-run false}]"},
		// p does not match DELETE (after a CREATE cached its match); d sees object null.
		{"delete", Request{Operation: admission.Delete, OldObject: cm("a")}, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.EvaluateRequest(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprintf("%v", got); s != tc.want && !(tc.want == "[]" && len(got) == 0) {
				t.Errorf("got  %s\nwant %s", s, tc.want)
			}
		})
	}
	if _, err := e.EvaluateRequest(Request{Operation: admission.Update, Object: cm("a")}); err == nil {
		t.Error("an UPDATE without oldObject: want an error")
	}
}
