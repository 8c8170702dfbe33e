package cel

import (
	"context"
	"fmt"

	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimek8s "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	admissionauthorizer "k8s.io/apiserver/pkg/admission/plugin/authorizer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
)

// maxAuditAnnotationValueLength mirrors the constant of the same name in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go.
const maxAuditAnnotationValueLength = 10 * 1024

// request builds the CREATE admission attributes for one object: its kind,
// its resource from the kind table, its namespace ("default" for a
// namespaced object without one, the object's own name for a Namespace, as
// the API server does) and the configured user.
func (e *Engine) request(o *manifest.Object) (admission.Attributes, manifest.Resource, bool) {
	obj, gvk, res, ns, ok := e.requestObject(o)
	if !ok {
		return nil, manifest.Resource{}, false
	}
	attr := admission.NewAttributesRecord(obj, nil, gvk, ns, o.Name, res.GVR, "", admission.Create, &metav1.CreateOptions{}, false, e.user)
	return attr, res, true
}

// requestObject is an object as the API server hands it to admission: its
// content with the namespace filled as the server fills it, its kind, its
// resource and the request's namespace.
func (e *Engine) requestObject(o *manifest.Object) (*unstructured.Unstructured, schema.GroupVersionKind, manifest.Resource, string, bool) {
	content, err := o.Content()
	if err != nil || content == nil {
		return nil, schema.GroupVersionKind{}, manifest.Resource{}, "", false
	}
	gvk := schema.FromAPIVersionAndKind(o.APIVersion, o.Kind)
	res := e.kinds.ResourceFor(gvk)
	ns := ""
	isNamespace := gvk.Group == "" && gvk.Version == "v1" && gvk.Kind == "Namespace"
	switch {
	case isNamespace:
		ns = o.Name
		if o.Labels[namespaceNameLabel] != o.Name {
			// The API server labels every Namespace with its name before admission.
			content = runtimek8s.DeepCopyJSON(content)
			u := unstructured.Unstructured{Object: content}
			l := u.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			l[namespaceNameLabel] = o.Name
			u.SetLabels(l)
		}
	case res.Namespaced:
		ns = o.Namespace
		if ns == "" {
			// kubectl apply puts it in the default namespace, and the API
			// server fills metadata.namespace before admission.
			ns = "default"
			content = runtimek8s.DeepCopyJSON(content)
			u := unstructured.Unstructured{Object: content}
			u.SetNamespace(ns)
		}
	}
	return &unstructured.Unstructured{Object: content}, gvk, res, ns, true
}

// evalObject mirrors dispatcher.Dispatch in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go for
// one CREATE request, with one difference: where the server stops at the
// first denial and turns warnings and audit records into side effects, it
// returns every decision of every matching binding as a diagnostic.
func (e *Engine) evalObject(o *manifest.Object) []rules.Diagnostic {
	a, _, ok := e.request(o)
	if !ok {
		return nil
	}
	ev := &objectEval{
		e: e, o: o, a: a, ctx: context.Background(),
		authz:     admissionauthorizer.NewCachingAuthorizer(e.authz),
		versioned: map[schema.GroupVersionKind]*admission.VersionedAttributes{},
	}
	e.compileMatching(a)
	for _, p := range e.policies {
		ev.policy(p)
	}
	return ev.out
}

// compileMatching compiles at once, on every core, what the first
// evaluation of the request by each policy whose matchConstraints match it
// would compile one after another under Options.CompileOnMatch: the fast
// match conditions, and the validator of a policy without any (which every
// evaluation needs). Only a run's first objects of a kind find anything to
// compile; the compiled policies are the ones the loop after this would
// compile (and a binding that then does not match leaves one unused).
func (e *Engine) compileMatching(a admission.Attributes) {
	if !e.opts.CompileOnMatch {
		return
	}
	var todo []*policyEntry
	for _, p := range e.policies {
		if p.spec == nil || len(p.bindings) == 0 || p.configErr != nil || p.fastDone.Load() {
			continue
		}
		if ok, _, _, err := e.definitionMatches(p, a); err == nil && ok {
			todo = append(todo, p)
		}
	}
	if len(todo) < 2 {
		return
	}
	parallel.Each(len(todo), func(i int) {
		if len(todo[i].fastMatchConditions()) == 0 {
			todo[i].compiledValidator()
		}
	})
}

// guessedMatch says, for an object whose kind is neither built in nor
// defined by a CRD, that the policies see it by a guessed resource, when
// the guess decides something: some policy's matchConstraints match it
// (as the dispatcher's first step, policy.policy does).
func (e *Engine) guessedMatch(o *manifest.Object) (string, bool) {
	gvk := schema.FromAPIVersionAndKind(o.APIVersion, o.Kind)
	if len(e.policies) == 0 || e.skip[o.Key()] || !e.kinds.ResourceFor(gvk).Guessed {
		return "", false
	}
	a, res, ok := e.request(o)
	if !ok {
		return "", false
	}
	for _, p := range e.policies {
		if p.spec == nil || len(p.bindings) == 0 {
			continue
		}
		if matches, _, _, err := e.definitionMatches(p, a); err == nil && matches {
			return fmt.Sprintf("kind %s is neither built in nor defined by a CustomResourceDefinition in the input; policies see it as resource %q (namespaced), a guess", res.GVK.GroupKind(), res.GVR.Resource), true
		}
	}
	return "", false
}

// objectEval is one request's walk through the policies, in the
// dispatcher's order: policy match, binding match, params, validation.
// The authorizer and the versioned attributes are shared by every policy,
// as in one Dispatch call.
type objectEval struct {
	e         *Engine
	o         *manifest.Object
	a         admission.Attributes
	ctx       context.Context
	authz     authorizer.UnconditionalAuthorizer
	versioned map[schema.GroupVersionKind]*admission.VersionedAttributes
	out       []rules.Diagnostic
	// decisions, when set, receives every decision as a Decision too
	// (EvaluateRequest).
	decisions *[]Decision
}

// policy evaluates every binding of one policy whose matchConstraints
// match the request.
func (ev *objectEval) policy(p *policyEntry) {
	if p.spec == nil || len(p.bindings) == 0 {
		return
	}
	matches, matchResource, matchKind, err := ev.e.definitionMatches(p, ev.a)
	if err != nil {
		ev.configError(err, p, nil)
		return
	}
	if !matches {
		return
	}
	if p.configErr != nil {
		ev.configError(p.configErr, p, nil)
		return
	}
	for _, be := range p.bindings {
		ev.binding(p, be.spec, matchResource, matchKind)
	}
}

// binding evaluates the policy once per param of a binding that matches
// the request.
func (ev *objectEval) binding(p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding, matchResource schema.GroupVersionResource, matchKind schema.GroupVersionKind) {
	matches, err := ev.e.matcher.BindingMatches(ev.a, ev.e.oi, validating.NewValidatingAdmissionPolicyBindingAccessor(binding))
	if err != nil {
		ev.configError(err, p, binding)
		return
	}
	if !matches {
		return
	}
	params, err := generic.CollectParams(p.spec.Spec.ParamKind, informerOrNil(p.params), p.paramScope, binding.Spec.ParamRef, ev.a.GetNamespace(), nil, nil)
	if err != nil {
		ev.configError(err, p, binding)
		return
	}
	versionedAttr, err := ev.versionedAttributes(matchKind, len(params) > 0)
	if err != nil {
		ev.configError(fmt.Errorf("failed to convert object version: %w", err), p, binding)
		return
	}
	namespace, err := ev.namespace()
	if err != nil {
		ev.configError(err, p, binding)
		return
	}
	for _, param := range params {
		ev.validate(p, binding, matchResource, versionedAttr, param, namespace)
	}
}

// versionedAttributes is the request converted to matchKind, made once
// per kind and only when there is a param to evaluate with (nil before).
func (ev *objectEval) versionedAttributes(matchKind schema.GroupVersionKind, needed bool) (*admission.VersionedAttributes, error) {
	va := ev.versioned[matchKind]
	if va != nil || !needed {
		return va, nil
	}
	va, err := admission.NewVersionedAttributes(ev.a, matchKind, ev.e.oi)
	if err != nil {
		return nil, err
	}
	ev.versioned[matchKind] = va
	return va, nil
}

// namespace is the request's Namespace object (nil for cluster-scoped
// objects and for a Namespace itself).
func (ev *objectEval) namespace() (*corev1.Namespace, error) {
	name := ev.a.GetNamespace()
	if gvk := ev.a.GetKind(); gvk.Kind == "Namespace" && gvk.Version == "v1" && gvk.Group == "" {
		name = ""
	}
	if name == "" {
		return nil, nil
	}
	return ev.e.matcher.GetNamespace(ev.ctx, name)
}

// validate runs the policy's validations with one param and reports its
// denials and audit annotations.
func (ev *objectEval) validate(p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding, matchResource schema.GroupVersionResource, versionedAttr *admission.VersionedAttributes, param runtimek8s.Object, namespace *corev1.Namespace) {
	if ev.a.GetOperation() == admission.Create && failsFastMatch(ev.ctx, p.fastMatchConditions(), versionedAttr, param) {
		return // upstream's Match would say no match: no decision
	}
	result := p.compiledValidator().Validate(ev.ctx, matchResource, versionedAttr, param, namespace, celconfig.RuntimeCELCostBudget, ev.authz)
	for _, decision := range result.Decisions {
		if decision.Action == validating.ActionDeny {
			ev.denial(p, binding, decision.Message)
			ev.record(p, binding, decision.Reason, decision.Message)
		}
	}
	for _, an := range result.AuditAnnotations {
		ev.auditAnnotation(p, binding, an)
	}
}

// denial reports a failed validation once per field message and once per
// validationAction of the binding, at the severity the action stands for.
func (ev *objectEval) denial(p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding, message string) {
	entries := []FieldMessage{{Message: message}}
	if p.fieldMessages {
		entries = SplitFieldMessages(message)
	}
	for _, en := range entries {
		for _, action := range binding.Spec.ValidationActions {
			switch action {
			case admissionv1.Deny:
				ev.report(p, rules.Error, en.Field, deniedMessage(p.name, binding, en.Message))
			case admissionv1.Warn:
				ev.report(p, rules.Warning, en.Field, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.name, binding.Name, en.Message))
			case admissionv1.Audit:
				ev.report(p, rules.Info, en.Field, fmt.Sprintf("Audit: validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.name, binding.Name, en.Message))
			}
		}
	}
}

// auditAnnotation reports a published audit annotation (cut to the
// server's length) or the error of one that failed to evaluate.
func (ev *objectEval) auditAnnotation(p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding, an validating.PolicyAuditAnnotation) {
	switch an.Action {
	case validating.AuditAnnotationActionPublish:
		value := an.Value
		if len(value) > maxAuditAnnotationValueLength {
			value = value[:maxAuditAnnotationValueLength]
		}
		ev.recordAnnotation(p, binding, an.Key, value)
		ev.report(p, rules.Info, "", fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' adds audit annotation %s/%s: %s", p.name, binding.Name, p.name, an.Key, value))
	case validating.AuditAnnotationActionError:
		ev.report(p, rules.Error, "", deniedMessage(p.name, binding, an.Error))
		ev.recordError(p, binding, an.Error)
	}
}

// configError reports a policy or binding that cannot be evaluated as the
// server does under the policy's failurePolicy: nothing for Ignore, a
// denial for Fail (the default).
func (ev *objectEval) configError(err error, p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding) {
	policy := admissionv1.Fail
	if p.spec.Spec.FailurePolicy != nil {
		policy = *p.spec.Spec.FailurePolicy
	}
	switch policy {
	case admissionv1.Ignore:
		return
	case admissionv1.Fail:
		what := "policy"
		if binding != nil {
			what = "binding"
		}
		msg := fmt.Errorf("failed to configure %s: %w", what, err).Error()
		ev.report(p, rules.Error, "", deniedMessage(p.name, binding, msg))
		ev.recordError(p, binding, msg)
	default:
		msg := fmt.Errorf("unrecognized failure policy: '%v'", policy).Error()
		ev.report(p, rules.Error, "", deniedMessage(p.name, binding, msg))
		ev.recordError(p, binding, msg)
	}
}

func (ev *objectEval) report(p *policyEntry, sev rules.Severity, field, msg string) {
	ev.out = append(ev.out, rules.Diagnostic{Rule: p.ruleID, Severity: sev, Object: ev.o, Field: field, Message: msg})
}

// definitionMatches is the matcher's DefinitionMatches, answered from the
// policy's cache when its matchConstraints have no selectors.
func (e *Engine) definitionMatches(p *policyEntry, a admission.Attributes) (bool, schema.GroupVersionResource, schema.GroupVersionKind, error) {
	if !p.cacheMatches {
		return e.matcher.DefinitionMatches(a, e.oi, validating.NewValidatingAdmissionPolicyAccessor(p.spec))
	}
	key := matchKey{a.GetKind(), a.GetResource(), a.GetSubresource(), a.GetOperation()}
	if r, ok := p.matches.Load(key); ok {
		m := r.(matchResult)
		return m.matches, m.resource, m.kind, m.err
	}
	var m matchResult
	m.matches, m.resource, m.kind, m.err = e.matcher.DefinitionMatches(a, e.oi, validating.NewValidatingAdmissionPolicyAccessor(p.spec))
	p.matches.Store(key, m)
	return m.matches, m.resource, m.kind, m.err
}

// informerOrNil keeps a nil *paramInformer from becoming a non-nil interface.
func informerOrNil(p *paramInformer) informers.GenericInformer {
	if p == nil {
		return nil
	}
	return p
}

// deniedMessage is the server's denial text (validating/dispatcher.go).
func deniedMessage(policy string, binding *admissionv1.ValidatingAdmissionPolicyBinding, msg string) string {
	if binding == nil {
		return fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", policy, msg)
	}
	return fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", policy, binding.Name, msg)
}
