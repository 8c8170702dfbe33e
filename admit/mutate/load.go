package mutate

import (
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kilnhq/kiln/manifest"
)

type bindingEntry struct {
	obj  *manifest.Object
	spec *admissionv1.MutatingAdmissionPolicyBinding
}

// load decodes the policies and bindings among objs, of any served version,
// into admissionregistration.k8s.io/v1 (the version the server's plugin
// reads), defaulted. Those the server refused at create (o.Refused: their
// problems are the schema checker's findings) never exist. A second policy
// of the same name is reported and left out.
func load(objs []*manifest.Object, report Report) (policies map[string]*admissionv1.MutatingAdmissionPolicy, bindings []bindingEntry, refused map[string]bool) {
	policies, refused = map[string]*admissionv1.MutatingAdmissionPolicy{}, map[string]bool{}
	where := map[string]*manifest.Object{}
	for _, o := range objs {
		if !IsPolicyObject(o) {
			continue
		}
		if o.Refused {
			if o.Kind == kindPolicy {
				refused[o.Name] = true
			}
			continue
		}
		switch o.Kind {
		case kindPolicy:
			p := &admissionv1.MutatingAdmissionPolicy{}
			if decode(o, p) != nil {
				continue
			}
			if prev := where[p.Name]; prev != nil {
				report(o, manifest.Problem{Rule: RuleBinding, Field: "metadata.name", Message: fmt.Sprintf("MutatingAdmissionPolicy %q is defined twice (also at %s); the later one would replace the earlier, so kiln ignores this one", p.Name, prev.Pos())})
				continue
			}
			policies[p.Name], where[p.Name] = p, o
		case kindBinding:
			b := &admissionv1.MutatingAdmissionPolicyBinding{}
			if decode(o, b) == nil {
				bindings = append(bindings, bindingEntry{obj: o, spec: b})
			}
		}
	}
	return policies, bindings, refused
}

// decode reads o (any version the scheme knows) into out, defaulted. A
// v1alpha1 or v1beta1 policy or binding is read as v1, whose fields are
// the same (the scheme has no conversion from v1alpha1 to v1), with
// v1alpha1's default parameterNotFoundAction, Deny, which v1 lacks.
func decode(o *manifest.Object, out any) error {
	content, err := o.Content()
	if err != nil {
		return err
	}
	if v := o.Version(); v != "v1" && IsPolicyObject(o) {
		content = asV1(content, v)
	}
	data, err := json.Marshal(content)
	if err != nil {
		return err
	}
	dec := legacyscheme.Codecs.UniversalDecoder(admissionv1.SchemeGroupVersion)
	obj, _, err := dec.Decode(data, nil, nil)
	if err != nil {
		return err
	}
	switch t := out.(type) {
	case *admissionv1.MutatingAdmissionPolicy:
		p, ok := obj.(*admissionv1.MutatingAdmissionPolicy)
		if !ok {
			return fmt.Errorf("not a MutatingAdmissionPolicy")
		}
		*t = *p
	case *admissionv1.MutatingAdmissionPolicyBinding:
		b, ok := obj.(*admissionv1.MutatingAdmissionPolicyBinding)
		if !ok {
			return fmt.Errorf("not a MutatingAdmissionPolicyBinding")
		}
		*t = *b
	case *admissionv1.MutatingWebhookConfiguration:
		c, ok := obj.(*admissionv1.MutatingWebhookConfiguration)
		if !ok {
			return fmt.Errorf("not a MutatingWebhookConfiguration")
		}
		*t = *c
	default:
		return fmt.Errorf("kiln does not decode %T", out)
	}
	return nil
}

// asV1 returns a copy of a v1alpha1 or v1beta1 policy's or binding's
// content as v1 (a shallow copy but for the changed maps).
func asV1(content map[string]any, version string) map[string]any {
	cp := make(map[string]any, len(content))
	for k, v := range content {
		cp[k] = v
	}
	cp["apiVersion"] = group + "/v1"
	spec, _ := content["spec"].(map[string]any)
	ref, _ := spec["paramRef"].(map[string]any)
	if version == "v1alpha1" && ref != nil && ref["parameterNotFoundAction"] == nil {
		s := make(map[string]any, len(spec))
		for k, v := range spec {
			s[k] = v
		}
		r := make(map[string]any, len(ref)+1)
		for k, v := range ref {
			r[k] = v
		}
		r["parameterNotFoundAction"] = "Deny"
		s["paramRef"] = r
		cp["spec"] = s
	}
	return cp
}
