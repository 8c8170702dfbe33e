package cel

import (
	"context"
	"fmt"

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
	content, err := o.Content()
	if err != nil || content == nil {
		return nil, manifest.Resource{}, false
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
	obj := &unstructured.Unstructured{Object: content}
	attr := admission.NewAttributesRecord(obj, nil, gvk, ns, o.Name, res.GVR, "", admission.Create, &metav1.CreateOptions{}, false, e.user)
	return attr, res, true
}

// evalObject mirrors dispatcher.Dispatch in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go for
// one CREATE request, with one difference: where the server stops at the
// first denial and turns warnings and audit records into side effects, it
// returns every decision of every matching binding as a diagnostic.
func (e *Engine) evalObject(o *manifest.Object) []rules.Diagnostic {
	a, res, ok := e.request(o)
	if !ok {
		return nil
	}
	var out []rules.Diagnostic
	if res.Guessed && e.opts.UnknownKindRule != "" {
		out = append(out, rules.Diagnostic{Rule: e.opts.UnknownKindRule, Object: o, Field: "kind",
			Message: fmt.Sprintf("kind %s is neither built in nor defined by a CustomResourceDefinition in the input; policies see it as resource %q (namespaced), a guess", res.GVK.GroupKind(), res.GVR.Resource)})
	}
	ctx := context.Background()
	reportAt := func(p *policyEntry, sev rules.Severity, field, msg string) {
		out = append(out, rules.Diagnostic{Rule: p.ruleID, Severity: sev, Object: o, Field: field, Message: msg})
	}
	report := func(p *policyEntry, sev rules.Severity, msg string) { reportAt(p, sev, "", msg) }
	addConfigError := func(err error, p *policyEntry, binding *admissionv1.ValidatingAdmissionPolicyBinding) {
		policy := admissionv1.Fail
		if p.spec.Spec.FailurePolicy != nil {
			policy = *p.spec.Spec.FailurePolicy
		}
		switch policy {
		case admissionv1.Ignore:
			return
		case admissionv1.Fail:
			var message string
			if binding == nil {
				message = fmt.Errorf("failed to configure policy: %w", err).Error()
			} else {
				message = fmt.Errorf("failed to configure binding: %w", err).Error()
			}
			report(p, rules.Error, deniedMessage(p.name, binding, message))
		default:
			report(p, rules.Error, deniedMessage(p.name, binding, fmt.Errorf("unrecognized failure policy: '%v'", policy).Error()))
		}
	}

	authz := admissionauthorizer.NewCachingAuthorizer(e.authz)
	versionedAttrs := map[schema.GroupVersionKind]*admission.VersionedAttributes{}

	for _, p := range e.policies {
		if p.spec == nil || len(p.bindings) == 0 {
			continue
		}
		definition := p.spec
		matches, matchResource, matchKind, err := e.definitionMatches(p, a)
		if err != nil {
			addConfigError(err, p, nil)
			continue
		}
		if !matches {
			continue
		} else if p.configErr != nil {
			addConfigError(p.configErr, p, nil)
			continue
		}

		for _, be := range p.bindings {
			binding := be.spec
			matches, err := e.matcher.BindingMatches(a, e.oi, validating.NewValidatingAdmissionPolicyBindingAccessor(binding))
			if err != nil {
				addConfigError(err, p, binding)
				continue
			}
			if !matches {
				continue
			}
			params, err := generic.CollectParams(definition.Spec.ParamKind, informerOrNil(p.params), p.paramScope, binding.Spec.ParamRef, a.GetNamespace(), nil, nil)
			if err != nil {
				addConfigError(err, p, binding)
				continue
			}
			versionedAttr := versionedAttrs[matchKind]
			if versionedAttr == nil && len(params) > 0 {
				va, err := admission.NewVersionedAttributes(a, matchKind, e.oi)
				if err != nil {
					addConfigError(fmt.Errorf("failed to convert object version: %w", err), p, binding)
					continue
				}
				versionedAttr = va
				versionedAttrs[matchKind] = va
			}

			var namespace *corev1.Namespace
			namespaceName := a.GetNamespace()
			if gvk := a.GetKind(); gvk.Kind == "Namespace" && gvk.Version == "v1" && gvk.Group == "" {
				namespaceName = ""
			}
			if namespaceName != "" {
				namespace, err = e.matcher.GetNamespace(ctx, namespaceName)
				if err != nil {
					addConfigError(err, p, binding)
					continue
				}
			}

			for _, param := range params {
				var pv runtimek8s.Object = param
				if failsFastMatch(ctx, p.fastMatch, versionedAttr, pv) {
					continue // upstream's Match would say no match: no decision
				}
				result := p.validator.Validate(ctx, matchResource, versionedAttr, pv, namespace, celconfig.RuntimeCELCostBudget, authz)
				for _, decision := range result.Decisions {
					if decision.Action != validating.ActionDeny {
						continue
					}
					entries := []FieldMessage{{Message: decision.Message}}
					if p.fieldMessages {
						entries = SplitFieldMessages(decision.Message)
					}
					for _, en := range entries {
						for _, action := range binding.Spec.ValidationActions {
							switch action {
							case admissionv1.Deny:
								reportAt(p, rules.Error, en.Field, deniedMessage(p.name, binding, en.Message))
							case admissionv1.Warn:
								reportAt(p, rules.Warning, en.Field, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.name, binding.Name, en.Message))
							case admissionv1.Audit:
								reportAt(p, rules.Info, en.Field, fmt.Sprintf("Audit: validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.name, binding.Name, en.Message))
							}
						}
					}
				}
				for _, an := range result.AuditAnnotations {
					switch an.Action {
					case validating.AuditAnnotationActionPublish:
						value := an.Value
						if len(value) > maxAuditAnnotationValueLength {
							value = value[:maxAuditAnnotationValueLength]
						}
						report(p, rules.Info, fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' adds audit annotation %s/%s: %s", p.name, binding.Name, p.name, an.Key, value))
					case validating.AuditAnnotationActionError:
						report(p, rules.Error, deniedMessage(p.name, binding, an.Error))
					}
				}
			}
		}
	}
	return out
}

// definitionMatches is the matcher's DefinitionMatches, answered from the
// policy's cache when its matchConstraints have no selectors.
func (e *Engine) definitionMatches(p *policyEntry, a admission.Attributes) (bool, schema.GroupVersionResource, schema.GroupVersionKind, error) {
	if !p.cacheMatches {
		return e.matcher.DefinitionMatches(a, e.oi, validating.NewValidatingAdmissionPolicyAccessor(p.spec))
	}
	key := matchKey{a.GetKind(), a.GetResource(), a.GetSubresource()}
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
