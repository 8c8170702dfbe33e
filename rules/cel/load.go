package cel

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
)

const (
	admissionGroup = "admissionregistration.k8s.io"
	kindPolicy     = "ValidatingAdmissionPolicy"
	kindBinding    = "ValidatingAdmissionPolicyBinding"
)

// IsPolicyObject reports whether o is a ValidatingAdmissionPolicy or a
// ValidatingAdmissionPolicyBinding at a version kiln reads (v1, v1beta1).
func IsPolicyObject(o *manifest.Object) bool {
	if o.Group() != admissionGroup || (o.Kind != kindPolicy && o.Kind != kindBinding) {
		return false
	}
	v := o.Version()
	return v == "v1" || v == "v1beta1"
}

// typeErrorField finds the field path in a JSON type error
// ("... into Go struct field ValidatingAdmissionPolicy.spec.validations of type ...").
var typeErrorField = regexp.MustCompile(`Go struct field \w+\.(\S+) of type`)

// shapeError is a policy or binding that does not decode: Field is the path
// of the offending field ("" when unknown).
type shapeError struct {
	Field string
	Msg   string
}

func (e *shapeError) Error() string { return e.Msg }

// decodeStrict decodes an object's content into a typed struct the way the
// API server would reject it: unknown and duplicate fields and wrong types
// are errors naming the field. v1beta1 objects decode into the v1 structs:
// the two versions have the same fields (v1beta1 → v1 conversion is the
// identity for ValidatingAdmissionPolicy and its binding).
func decodeStrict(o *manifest.Object, into any) error {
	content, err := o.Content()
	if err != nil {
		return &shapeError{Msg: err.Error()}
	}
	data, err := json.Marshal(content)
	if err != nil {
		return &shapeError{Msg: err.Error()}
	}
	strict, err := sigsjson.UnmarshalStrict(data, into)
	if err == nil && len(strict) > 0 {
		err = strict[0]
	}
	if err == nil {
		return nil
	}
	field := ""
	var fe sigsjson.FieldError
	if errors.As(err, &fe) {
		field = fe.FieldPath()
	} else if m := typeErrorField.FindStringSubmatch(err.Error()); m != nil {
		field = m[1]
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return &shapeError{Field: field, Msg: fmt.Sprintf("%s %q does not decode as %s: %s", o.Kind, o.Name, o.APIVersion, msg)}
}

// decodePolicy decodes a ValidatingAdmissionPolicy and applies the API
// server's defaults.
func decodePolicy(o *manifest.Object) (*admissionv1.ValidatingAdmissionPolicy, error) {
	p := &admissionv1.ValidatingAdmissionPolicy{}
	if err := decodeStrict(o, p); err != nil {
		return nil, err
	}
	defaultPolicy(p)
	return p, nil
}

// decodeBinding decodes a ValidatingAdmissionPolicyBinding and applies the
// API server's defaults.
func decodeBinding(o *manifest.Object) (*admissionv1.ValidatingAdmissionPolicyBinding, error) {
	b := &admissionv1.ValidatingAdmissionPolicyBinding{}
	if err := decodeStrict(o, b); err != nil {
		return nil, err
	}
	if b.Spec.MatchResources != nil {
		defaultMatchResources(b.Spec.MatchResources)
	}
	return b, nil
}

// defaultPolicy mirrors SetDefaults_ValidatingAdmissionPolicySpec and
// SetDefaults_MatchResources in k8s.io/kubernetes
// pkg/apis/admissionregistration/v1/defaults.go (not importable): failurePolicy
// Fail; matchPolicy Equivalent; empty namespace and object selectors; rule
// scope "*".
func defaultPolicy(p *admissionv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		f := admissionv1.Fail
		p.Spec.FailurePolicy = &f
	}
	if p.Spec.MatchConstraints != nil {
		defaultMatchResources(p.Spec.MatchConstraints)
	}
}

func defaultMatchResources(m *admissionv1.MatchResources) {
	if m.MatchPolicy == nil {
		e := admissionv1.Equivalent
		m.MatchPolicy = &e
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rs := range [][]admissionv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rs {
			if rs[i].Scope == nil {
				s := admissionv1.AllScopes
				rs[i].Scope = &s
			}
		}
	}
}
