package cel

import (
	"fmt"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// UnknownKindRule is the note on an object that the run's policies match
// only by a resource name kiln guessed from its kind.
var UnknownKindRule = &rules.Rule{
	ID:       "policy/unknown-kind",
	Severity: rules.Warning,
	Summary:  "An object's kind is neither built in nor defined by a CRD in the input; policies match it by a guessed resource name",
	Doc: `ValidatingAdmissionPolicies match requests by resource (e.g. "deployments"), not by kind.
kiln knows the resource of every built-in kind and of the kinds that CustomResourceDefinitions in the
input define. For any other kind it guesses the lowercase plural of the kind ("Widget" → "widgets",
"Policy" → "policies") and treats the object as namespaced. Add the CRD to the input (or to --policy)
to match exactly. The note comes once per kind, at its first object, and only when some policy's
matchConstraints match the guessed resource (elsewhere the guess decides nothing).`,
	Fail: unknownKindPolicy + "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\n",
	Pass: unknownKindPolicy + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w, namespace: shop}\n",
}

// unknownKindPolicy is a policy that matches every resource, for the
// rule's examples.
const unknownKindPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}]
  validations: [{expression: "true"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas}
spec: {policyName: replicas, validationActions: [Deny]}
---
`

// UnknownKind is the "unknown-kind" checker: when the run has policies, it
// notes each kind the policies match only by a guessed resource, once, at
// its first object. It declares its rule only then.
var UnknownKind = &rules.Checker{
	Name:     "unknown-kind",
	Declares: []*rules.Rule{UnknownKindRule},
	Requires: requires,
	Prepare:  prepareUnknownKind,
}

func prepareUnknownKind(pass *rules.Pass) (rules.Judge, error) {
	run := runEngine(pass)
	if run.e == nil || len(run.e.policies) == 0 {
		return nil, nil // no policies (a --policy read error is the "cel" checker's to report)
	}
	// Reports describe it without the examples, which kiln explain shows.
	declared := *UnknownKindRule
	declared.Fail, declared.Pass = "", ""
	pass.Declare(&declared)
	first := pass.FirstOfKind("unknown-kind")
	pass.Finish(func() {
		first.Each(func(m *rules.Mark, msg string, count int) {
			if count > 1 {
				msg += fmt.Sprintf(" (said once for the %d objects of this kind)", count)
			}
			pass.Report(rules.Diagnostic{Rule: UnknownKindRule.ID, At: m, Message: msg})
		})
	})
	return func(o *manifest.Object) {
		if msg, ok := run.e.guessedMatch(o); ok {
			first.Note(pass, o, "kind", msg)
		}
	}, nil
}
