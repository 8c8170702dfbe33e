// Package policytest runs unit tests of admission policies (kiln test):
// test files name policies, bindings, the cluster's objects (Namespaces,
// params, CRDs) and the objects of requests, and per case the outcome the
// API server must give. Cases run through the same ValidatingAdmissionPolicy
// engine as kiln lint (rules/cel), on objects admitted as the server admits
// them (package admit), with the request's operation, old object, user and
// dry-run; MutatingAdmissionPolicies run through a Mutator.
//
// Two formats are read: kiln's own (a file named kiln-test.yaml or
// *.kiln-test.yaml, kind PolicyTest, see kilnformat.go) and Kyverno's
// (kyverno-test.yaml, kind Test), whose admission-policy results run as the
// API server would judge them.
package policytest

import (
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
)

// Suite is one test file, decoded.
type Suite struct {
	// Name is the test's name and File the test file.
	Name string
	File string
	// Format is "kiln" or "kyverno".
	Format string
	// KubeVersion is the version the suite targets (served-version notes,
	// the built-in policies' params).
	KubeVersion manifest.KubeVersion
	// Policies are the policies and bindings, Cluster the objects that
	// exist in the cluster (Namespaces, params, CRDs, and whatever else
	// the policy files hold).
	Policies []*manifest.Object
	Cluster  []*manifest.Object
	// Builtin are kiln's built-in policies with their bindings and params
	// (kiln policies export): they run at any kubeVersion, as in kiln lint.
	Builtin []*manifest.Object
	// Cases are the requests and their expected outcomes.
	Cases []*Case
	// Notes are said once for the suite (served versions).
	Notes []string
	// bound are the bindings the test file stands for (Kyverno's format:
	// a policy without a binding), among Policies: no version note.
	bound map[*manifest.Object]bool
}

// Case is one request and what the server must answer.
type Case struct {
	Name string
	Pos  manifest.Position
	// Request is the admission request; its objects are admitted before
	// the policies see them.
	Request cel.Request
	Expect  Expect
	// Note is said on the case's line (where Kyverno's expectation is
	// read as the API server's).
	Note string
}

// Outcome is the server's answer to a request.
type Outcome string

// The outcomes a case can expect.
const (
	// Allowed: admitted with no warning from a policy.
	Allowed Outcome = "allowed"
	// Denied: refused (a Deny decision, an error under failurePolicy Fail,
	// or the server's own validation of the object).
	Denied Outcome = "denied"
	// Warned: admitted with at least one warning.
	Warned Outcome = "warned"
)

// Expect is a case's expected outcome. Empty fields are not checked.
type Expect struct {
	Outcome Outcome
	// Policy: the policy that denied (the first denial), or one that
	// warned.
	Policy string
	// Message is that denial's or warning's message as the policy writes
	// it (without the server's "ValidatingAdmissionPolicy … denied
	// request: " prefix).
	Message string
	// Warnings, when set, are every warning's message, in order.
	Warnings []string
	// Audit, when set, are the messages of every failed validation of a
	// binding with validationActions Audit, in order.
	Audit []string
	// AuditAnnotations, when set, are every published audit annotation
	// (key "<policy>/<key>").
	AuditAnnotations map[string]string
	// Admitted, when set, is the object the server stores after mutation
	// (MutatingAdmissionPolicies).
	Admitted *manifest.Object
	// Only, when set, restricts the check to this policy's decisions
	// (Kyverno's per-policy results).
	Only string
}
