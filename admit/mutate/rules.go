package mutate

import "github.com/kilnhq/kiln/rules"

// The rules of mutating admission, reported by the schema checker (which
// runs the Mutator while it admits each object).
const (
	RuleApplied = "mutation/applied"
	RuleDenied  = "mutation/denied"
	RuleBinding = "mutation/binding"
	// RuleWebhook and RuleUnsupported say what kiln cannot evaluate.
	RuleWebhook     = "mutation/webhook"
	RuleUnsupported = "mutation/unsupported"
)

const examplePolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: default-team
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE]
        resources: [configmaps]
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: default-team
spec:
  policyName: default-team
---
`

// Rules are the mutation/… rules.
var Rules = []*rules.Rule{
	{
		ID:       RuleApplied,
		Severity: rules.Info,
		Summary:  "a MutatingAdmissionPolicy changed the object before it was judged",
		Doc: "The API server runs mutating admission before it validates an object: MutatingAdmissionPolicies and their " +
			"bindings (in the input or under --policy) change each object they match, and Pod Security, " +
			"ValidatingAdmissionPolicies, the schema checks and kiln's own rules judge the changed object, as the server " +
			"does. The finding names the policy, the binding and the fields it changed, so that a reviewer sees why a " +
			"violation disappeared. kiln build --show-mutated prints the objects as admitted.",
		Fail: examplePolicy + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  mode: prod\n",
		Pass: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  mode: prod\n",
	},
	{
		ID:       RuleDenied,
		Severity: rules.Error,
		Summary:  "mutating admission refuses the object (a policy failed under failurePolicy Fail)",
		Doc: "A MutatingAdmissionPolicy whose matchConditions, variables or mutations fail to evaluate (an error, " +
			"the CEL cost limit, a patch that does not apply, a missing param with parameterNotFoundAction Deny) " +
			"makes the API server refuse the request when its failurePolicy is Fail (the default); with Ignore the " +
			"server skips the policy. The message is the server's.",
		Fail: `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: strict
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE]
        resources: [configmaps]
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: '[JSONPatch{op: "add", path: "/data/copy", value: object.data["missing"]}]'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: strict
spec:
  policyName: strict
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  mode: prod
`,
		Pass: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  mode: prod\n",
	},
	{
		ID:       RuleBinding,
		Severity: rules.Warning,
		Summary:  "a MutatingAdmissionPolicyBinding names a policy that is not there, or a policy is defined twice",
		Doc: "The API server ignores a binding until the MutatingAdmissionPolicy it names exists, so nothing is " +
			"mutated; add the policy to the linted files or to --policy, or fix spec.policyName.",
		Fail: `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: orphan
spec:
  policyName: missing
`,
		Pass: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  mode: prod\n",
	},
	{
		ID:       RuleWebhook,
		Severity: rules.Info,
		Summary:  "a mutating webhook in the input may change these objects in ways kiln cannot evaluate",
		Doc: "A MutatingWebhookConfiguration in the input whose rules and selectors match an object means the cluster " +
			"sends it to a webhook service before validation; kiln cannot call it offline and judges the object " +
			"without its changes. One note per webhook and kind, at the first object, with how many it concerns.",
		Fail: `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: injector
webhooks:
  - name: inject.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      url: https://injector.example.com/mutate
    rules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE]
        resources: [configmaps]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  mode: prod
`,
		Pass: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  mode: prod\n",
	},
	{
		ID:       RuleUnsupported,
		Severity: rules.Info,
		Summary:  "a MutatingAdmissionPolicy matches custom resources, which kiln does not mutate yet",
		Doc: "kiln applies MutatingAdmissionPolicies to built-in kinds (it has server-side apply's types for them); a " +
			"custom resource a policy matches is judged as written, without the policy's changes. One note per " +
			"policy and kind, at the first object, with how many it concerns.",
		Fail: `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: stamp-widgets
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [example.com]
        apiVersions: ["*"]
        operations: [CREATE]
        resources: [widgets]
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: 'Object{metadata: Object.metadata{labels: {"stamped": "yes"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: stamp-widgets
spec:
  policyName: stamp-widgets
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: shop
`,
		Pass: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  mode: prod\n",
	},
}
