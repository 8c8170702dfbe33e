package stage_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/admit/stage"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
	"k8s.io/apiserver/pkg/admission"
)

// requestPolicies: a label on every ConfigMap CREATE and UPDATE (not for
// the robot), the old object's mode recorded on UPDATE, a patch that does
// not apply to Secrets, a label value validation refuses on Services, and a
// policy on a custom resource.
const requestPolicies = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: team}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}]
  matchConditions: [{name: not-the-robot, expression: "request.userInfo.username != 'robot'"}]
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration: {expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}}'}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: team}
spec: {policyName: team}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: previous}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [configmaps]}]
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration: {expression: 'Object{metadata: Object.metadata{annotations: {"previous": oldObject.data.mode}}}'}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: previous}
spec: {policyName: previous}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: replace-owner}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets]}]
  reinvocationPolicy: Never
  mutations:
    - patchType: JSONPatch
      jsonPatch: {expression: '[JSONPatch{op: "replace", path: "/metadata/annotations/owner", value: "platform"}]'}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: replace-owner}
spec: {policyName: replace-owner}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: bad-label}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [services]}]
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration: {expression: 'Object{metadata: Object.metadata{labels: {"tier": "not valid!"}}}'}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: bad-label}
spec: {policyName: bad-label}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: widget-size}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}]
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration: {expression: 'Object{spec: Object.spec{size: 1}}'}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: widget-size}
spec: {policyName: widget-size}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`

const requestObjects = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default, uid: new-uid}
data: {mode: slow}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default, uid: stored-uid, creationTimestamp: "2026-01-02T03:04:05Z"}
data: {mode: fast}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: default}
stringData: {token: abc}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec: {size: 3}
`

// TestRequests: each request is admitted as the server admits it: the
// request's user, an UPDATE's identity kept and its old object read by the
// mutations, a denial, a refusal of the mutated object, and what kiln
// cannot evaluate.
func TestRequests(t *testing.T) {
	cluster := parse(t, requestPolicies)
	objs := parse(t, requestObjects)
	cm, stored, secret, svc, widget := objs[0], objs[1], objs[2], objs[3], objs[4]
	var policies, context []*manifest.Object
	for _, o := range cluster {
		if strings.HasPrefix(o.Kind, "MutatingAdmissionPolicy") {
			policies = append(policies, o)
		} else {
			context = append(context, o)
		}
	}
	for _, tc := range []struct {
		name     string
		req      cel.Request
		groups   []string
		meta     map[string]any // what the admitted object's metadata holds
		denied   string
		refused  string
		err      string
		noMutate bool // no MutatingAdmissionPolicy set
	}{
		{name: "create: mutated", req: cel.Request{Operation: admission.Create, Object: cm},
			meta: map[string]any{"labels": map[string]any{"team": "platform"}, "uid": "new-uid"}},
		{name: "a user is authenticated; the robot is not mutated", req: cel.Request{Operation: admission.Create, Object: cm, User: "robot", Groups: []string{"bots"}},
			groups: []string{"bots", "system:authenticated"}, meta: map[string]any{"labels": nil}},
		{name: "update: the stored identity kept, the old object read", req: cel.Request{Operation: admission.Update, Object: cm, OldObject: stored},
			meta: map[string]any{"uid": "stored-uid", "creationTimestamp": "2026-01-02T03:04:05Z", "labels": map[string]any{"team": "platform"}, "annotations": map[string]any{"previous": "fast"}}},
		{name: "delete: nothing to mutate", req: cel.Request{Operation: admission.Delete, OldObject: stored}},
		{name: "a patch that does not apply denies", req: cel.Request{Operation: admission.Create, Object: secret}, denied: "replace operation does not apply"},
		{name: "validation refuses the mutated object", req: cel.Request{Operation: admission.Create, Object: svc}, refused: "not valid!"},
		{name: "a custom resource cannot be mutated", req: cel.Request{Operation: admission.Create, Object: widget}, err: `cannot evaluate mutations: MutatingAdmissionPolicy "widget-size" matches Widget`},
		{name: "without policies the object is as sent", req: cel.Request{Operation: admission.Create, Object: cm}, noMutate: true,
			meta: map[string]any{"labels": nil, "uid": "new-uid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := stage.ForRequests(cluster, objs, stage.Options{KubeVersion: manifest.LatestKube})
			if !tc.noMutate {
				r.SetMutating(policies, context)
			}
			ad := r.Admit(tc.req)
			if tc.groups != nil && !slices.Equal(ad.Request.Groups, tc.groups) {
				t.Errorf("groups %q, want %q", ad.Request.Groups, tc.groups)
			}
			if got := errText(ad.Denied); !strings.Contains(got, tc.denied) || (tc.denied == "") != (ad.Denied == nil) {
				t.Errorf("denied %q, want %q", got, tc.denied)
			}
			if (tc.refused == "") != (ad.Refused == nil) || (ad.Refused != nil && !strings.Contains(problemsText(ad.Refused.Problems), tc.refused)) {
				t.Errorf("refused %+v, want %q", ad.Refused, tc.refused)
			}
			if got := errText(ad.Err); !strings.Contains(got, tc.err) || (tc.err == "") != (ad.Err == nil) || (ad.Err != nil && !errors.Is(ad.Err, stage.ErrCannotEvaluate)) {
				t.Errorf("err %q, want %q", got, tc.err)
			}
			if tc.meta == nil {
				return
			}
			c, err := ad.Request.Object.Content()
			if err != nil {
				t.Fatal(err)
			}
			md, _ := c["metadata"].(map[string]any)
			for k, want := range tc.meta {
				if got := md[k]; !equalJSON(got, want) {
					t.Errorf("metadata.%s = %v, want %v", k, got, want)
				}
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func problemsText(ps []admit.Problem) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Field+": "+p.Message)
	}
	return strings.Join(out, "; ")
}

func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			if !equalJSON(v, bm[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}
