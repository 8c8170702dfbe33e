package cel

import (
	"context"
	"fmt"

	"github.com/kilnhq/kiln/manifest"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimek8s "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	admissionauthorizer "k8s.io/apiserver/pkg/admission/plugin/authorizer"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Request is one admission request, as the API server hands it to the
// ValidatingAdmissionPolicy plugin: kiln lint only ever sends CREATE, a
// policy test sends UPDATE and DELETE too.
type Request struct {
	// Operation is CREATE, UPDATE or DELETE.
	Operation admission.Operation
	// Object is the object after the request (nil for DELETE) and OldObject
	// the stored one before it (nil for CREATE). Both are admitted objects
	// (see package admit), as the server holds them.
	Object, OldObject *manifest.Object
	// User and Groups are request.userInfo (the engine's when User is empty).
	User   string
	Groups []string
	// DryRun is request.dryRun.
	DryRun bool
}

// DecisionKind is what a binding did to a request.
type DecisionKind string

// The kinds of Decision, as the server acts on them.
const (
	// Deny: a failed validation of a binding with validationActions Deny,
	// or an error under failurePolicy Fail; the server refuses the request
	// with the first one.
	Deny DecisionKind = "Deny"
	// Warn: a failed validation the client sees as a warning.
	Warn DecisionKind = "Warn"
	// Audit: a failed validation recorded in the audit annotation
	// validation.policy.admission.k8s.io/validation_failure.
	Audit DecisionKind = "Audit"
	// Annotation: an audit annotation the policy publishes (Key, Value).
	Annotation DecisionKind = "AuditAnnotation"
)

// Decision is one thing a binding did to a request.
type Decision struct {
	Kind    DecisionKind
	Policy  string
	Binding string // "" when the policy itself cannot be configured
	// Message is the validation's message, or the error that denied.
	Message string
	// Reason is the status reason of a denial (the validation's reason;
	// "" means the server's default, Invalid).
	Reason metav1.StatusReason
	// Key and Value are an audit annotation's (published as Policy/Key).
	Key, Value string
}

// ServerText is what the server says for the decision: the denial's text
// (inside the Forbidden error), the warning header, the audit record.
func (d Decision) ServerText() string {
	switch d.Kind {
	case Deny:
		if d.Binding == "" {
			return deniedMessage(d.Policy, nil, d.Message)
		}
		return fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.Policy, d.Binding, d.Message)
	case Warn:
		return fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", d.Policy, d.Binding, d.Message)
	case Audit:
		return fmt.Sprintf("Audit: validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", d.Policy, d.Binding, d.Message)
	default:
		return fmt.Sprintf("audit annotation %s/%s: %s", d.Policy, d.Key, d.Value)
	}
}

// EvaluateRequest runs every binding against one request, as the server's
// dispatcher does, and returns every decision in the dispatcher's order
// (policies by name, their bindings by name): the server denies with the
// first Deny, sends every Warn and records every Audit and Annotation. An
// error means the request cannot be made (no object to judge, or an object
// that is not a Kubernetes object).
func (e *Engine) EvaluateRequest(r Request) ([]Decision, error) {
	a, err := e.attributes(r)
	if err != nil {
		return nil, err
	}
	if len(e.policies) == 0 {
		return nil, nil
	}
	var decisions []Decision
	o := r.Object
	if o == nil {
		o = r.OldObject
	}
	ev := &objectEval{
		e: e, o: o, a: a, ctx: context.Background(),
		authz:     admissionauthorizer.NewCachingAuthorizer(e.authz),
		versioned: map[schema.GroupVersionKind]*admission.VersionedAttributes{},
		decisions: &decisions,
	}
	for _, p := range e.policies {
		ev.policy(p)
	}
	return decisions, nil
}

// attributes builds the admission attributes of a request.
func (e *Engine) attributes(r Request) (admission.Attributes, error) {
	u := e.user
	if r.User != "" {
		u = &user.DefaultInfo{Name: r.User, Groups: r.Groups}
	}
	options := map[admission.Operation]runtimek8s.Object{
		admission.Create: &metav1.CreateOptions{},
		admission.Update: &metav1.UpdateOptions{},
		admission.Delete: &metav1.DeleteOptions{},
	}
	opts, ok := options[r.Operation]
	if !ok {
		return nil, fmt.Errorf("operation %q: kiln evaluates CREATE, UPDATE and DELETE", r.Operation)
	}
	main := r.Object
	if r.Operation == admission.Delete {
		main = r.OldObject
	}
	if main == nil || (r.Operation == admission.Update && r.OldObject == nil) {
		return nil, fmt.Errorf("a %s request needs %s", r.Operation, map[admission.Operation]string{
			admission.Create: "an object", admission.Update: "an object and an oldObject", admission.Delete: "an oldObject"}[r.Operation])
	}
	obj, gvk, res, ns, ok := e.requestObject(main)
	if !ok {
		return nil, fmt.Errorf("%s: the object cannot be read", main.Pos())
	}
	newObj, oldObj := obj, obj
	switch r.Operation {
	case admission.Create:
		oldObj = nil
	case admission.Delete:
		newObj = nil
	case admission.Update:
		if oldObj, _, _, _, ok = e.requestObject(r.OldObject); !ok {
			return nil, fmt.Errorf("%s: the old object cannot be read", r.OldObject.Pos())
		}
	}
	return admission.NewAttributesRecord(objectOrNil(newObj), objectOrNil(oldObj), gvk, ns, main.Name, res.GVR, "", r.Operation, opts, r.DryRun, u), nil
}

// objectOrNil keeps a nil *Unstructured from becoming a non-nil object.
func objectOrNil(u *unstructured.Unstructured) runtimek8s.Object {
	if u == nil {
		return nil
	}
	return u
}

// record notes a failed validation once per validationAction of the binding.
func (ev *objectEval) record(p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding, reason metav1.StatusReason, msg string) {
	if ev.decisions == nil {
		return
	}
	for _, action := range binding.Spec.ValidationActions {
		kind := map[admissionv1.ValidationAction]DecisionKind{admissionv1.Deny: Deny, admissionv1.Warn: Warn, admissionv1.Audit: Audit}[action]
		if kind != "" {
			*ev.decisions = append(*ev.decisions, Decision{Kind: kind, Policy: p.name, Binding: binding.Name, Message: msg, Reason: reason})
		}
	}
}

// recordError notes an error that denies the request whatever the
// binding's validationActions (failurePolicy Fail).
func (ev *objectEval) recordError(p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding, msg string) {
	if ev.decisions == nil {
		return
	}
	d := Decision{Kind: Deny, Policy: p.name, Message: msg}
	if binding != nil {
		d.Binding = binding.Name
	}
	*ev.decisions = append(*ev.decisions, d)
}

// recordAnnotation notes a published audit annotation.
func (ev *objectEval) recordAnnotation(p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding, key, value string) {
	if ev.decisions == nil {
		return
	}
	*ev.decisions = append(*ev.decisions, Decision{Kind: Annotation, Policy: p.name, Binding: binding.Name, Key: key, Value: value})
}
