package mutate

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
)

// UnsupportedError is an error of Evaluate that is not the server's answer
// but kiln's: a request kiln cannot mutate as the server would.
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

func unsupported(format string, args ...any) error {
	return &UnsupportedError{Msg: fmt.Sprintf(format, args...)}
}

// ForRequests loads and compiles the MutatingAdmissionPolicies and bindings
// among objs (with the params and Namespaces among them) for Evaluate, one
// request at a time (kiln test). What is wrong with them (a binding without
// its policy, a policy defined twice) goes to report. It returns nil when
// no policy has a binding: no request is mutated.
func ForRequests(objs []*manifest.Object, kinds *manifest.Kinds, opts Options, report Report) *Mutator {
	m := build(objs, kinds, opts, report)
	if m == nil || len(m.hooks) == 0 {
		return nil
	}
	return m
}

// Evaluate runs mutating admission on one CREATE or UPDATE request as the
// server's admission chain does (the policies once, once more on
// reinvocation), and returns the object after mutation, as the request's
// version. Unlike Mutate it reports nothing, notes no webhooks and leaves
// pod templates alone: the server mutates a Pod when it is created, not the
// workload that will create it. An error is the server's denial, or an
// *UnsupportedError when kiln cannot evaluate the request.
func (m *Mutator) Evaluate(req cel.Request) (map[string]any, error) {
	var op admission.Operation
	var opts runtime.Object
	switch req.Operation {
	case admission.Create:
		op, opts = admission.Create, &metav1.CreateOptions{}
	case admission.Update:
		op, opts = admission.Update, &metav1.UpdateOptions{}
	default:
		return nil, unsupported("MutatingAdmissionPolicies of a %s request (kiln runs them on CREATE and UPDATE)", req.Operation)
	}
	o := req.Object
	if o == nil || (op == admission.Update && req.OldObject == nil) {
		return nil, unsupported("the request lacks its object or, for an UPDATE, its oldObject")
	}
	gvk := schema.FromAPIVersionAndKind(o.APIVersion, o.Kind)
	res := m.kinds.ResourceFor(gvk)
	ns := requestNamespace(o, gvk, res)
	obj, err := internalObject(o, gvk)
	if err != nil {
		return nil, err
	}
	var old runtime.Object
	if op == admission.Update {
		if old, err = internalObject(req.OldObject, gvk); err != nil {
			return nil, err
		}
	}
	u := m.user
	if req.User != "" {
		u = &user.DefaultInfo{Name: req.User, Groups: req.Groups}
	}
	if obj == nil {
		// A custom resource: kiln has no structured-merge types for it.
		content, _ := o.Content()
		attr := admission.NewAttributesRecord(&unstructured.Unstructured{Object: content}, nil, gvk, ns, o.Name, res.GVR, "", op, opts, req.DryRun, u)
		for _, h := range m.hooks {
			if h.ConfigurationError == nil && m.hookMatches(h, attr) {
				return nil, unsupported("MutatingAdmissionPolicy %q matches %s, a custom resource, and kiln does not mutate custom resources yet", h.Policy.Name, o.Kind)
			}
		}
		return content, nil
	}
	if acc, err := meta.Accessor(obj); err == nil && res.Namespaced && acc.GetNamespace() == "" {
		acc.SetNamespace(ns) // the handler sets it from the URL
	}
	attr := admission.NewAttributesRecord(obj, old, gvk, ns, o.Name, res.GVR, "", op, opts, req.DryRun, u)
	if _, err := m.dispatch(attr, gvk); err != nil {
		return nil, err
	}
	versioned, err := legacyscheme.Scheme.ConvertToVersion(attr.GetObject(), gvk.GroupVersion())
	if err != nil {
		return nil, unsupported("the mutated %s cannot be converted back to %s: %v", o.Kind, o.APIVersion, err)
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(versioned)
	if err != nil {
		return nil, unsupported("the mutated %s cannot be read: %v", o.Kind, err)
	}
	out["apiVersion"], out["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return out, nil
}

// internalObject is o, a built-in kind, as the internal type the server's
// admission chain holds (decoded, defaulted); nil, nil for a kind the
// scheme does not know (a custom resource).
func internalObject(o *manifest.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	if !legacyscheme.Scheme.Recognizes(gvk) {
		return nil, nil
	}
	content, err := o.Content()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(content)
	if err != nil {
		return nil, unsupported("%s: the object cannot be sent as JSON: %v", o.Pos(), err)
	}
	obj, _, err := legacyscheme.Codecs.UniversalDeserializer().Decode(data, &gvk, nil)
	if err != nil {
		return nil, unsupported("%s: the API server cannot decode this %s: %v", o.Pos(), gvk.Kind, err)
	}
	legacyscheme.Scheme.Default(obj)
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, unsupported("%s: the API server cannot convert this %s: %v", o.Pos(), gvk.Kind, err)
	}
	return internal, nil
}
