package psa

import (
	"encoding/json"
	"fmt"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// decodeTemplate decodes a pod template's metadata and spec as the API server
// does: field names match case-sensitively, unknown fields are dropped, and a
// value of the wrong type is an error. It then applies the server defaults
// that change Pod Security verdicts (see applyDefaults).
func decodeTemplate(content map[string]any, t manifest.PodTemplate) (*metav1.ObjectMeta, *corev1.PodSpec, error) {
	meta, err := convert[metav1.ObjectMeta](content, t.MetadataPath())
	if err != nil {
		return nil, nil, err
	}
	spec, err := convert[corev1.PodSpec](content, t.SpecPath())
	if err != nil {
		return nil, nil, err
	}
	applyDefaults(meta, spec)
	return meta, spec, nil
}

// decodeError is a value in a pod template that the API server cannot decode.
type decodeError struct {
	// Path is the field path of the template part (metadata or spec) in
	// the object; Field that of the value at fault, when it was found.
	Path, Field string
	// Msg says what is wrong, in plain words, naming the field.
	Msg string
}

func (e *decodeError) Error() string { return e.Msg }

// decodeDiagnostic reports a pod template that the API server cannot
// decode. When admission found that the server refuses the object, the
// schema checker reported why (schema/type, schema/decode) at the field, and
// Pod Security, an admission plugin, never runs on it: one plain note says
// so at the template instead of repeating the problem.
func decodeDiagnostic(o *manifest.Object, t manifest.PodTemplate, prefix string, err error) rules.Diagnostic {
	d := rules.Diagnostic{Rule: DecodeRule, Object: o, Field: t.SpecPath(), Message: prefix + "the API server would reject this pod template: " + err.Error()}
	de, ok := err.(*decodeError)
	if ok {
		d.Field = de.Field
	}
	if o.Refused {
		d.Severity = rules.Info
		d.Field = t.SpecPath()
		d.Message = prefix + "Pod Security does not judge this pod template: the API server would reject this pod template before admission"
		if ok && de.Field != "" {
			d.Message += " (fix " + de.Field + " first)"
		}
	}
	return d
}

// convert decodes the mapping at path into a T (a zero T when it is absent).
//
// runtime.DefaultUnstructuredConverter matches JSON field names exactly and
// drops unknown fields, like the API server's decoder, and is several times
// faster than a JSON round trip. When it fails, the value is decoded again
// the API server's way (JSON, sigs.k8s.io/json case-sensitive) for its
// verdict and its more precise error.
func convert[T any](content map[string]any, path string) (*T, error) {
	out := new(T)
	v := manifest.ValueAt(content, path)
	if v == nil {
		return out, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &decodeError{Path: path, Field: path, Msg: path + " must be a mapping, not " + describe(v)}
	}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out)
	if err == nil {
		return out, nil
	}
	data, jerr := json.Marshal(m)
	if jerr != nil {
		return nil, &decodeError{Path: path, Field: path, Msg: path + ": " + err.Error()}
	}
	out = new(T)
	if jerr = kjson.UnmarshalCaseSensitivePreserveInts(data, out); jerr != nil {
		field, msg := admit.ExplainDecodeError(jerr, m, path)
		return nil, &decodeError{Path: path, Field: field, Msg: msg}
	}
	return out, nil
}

func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// applyDefaults applies the server's Pod defaulting with its own code
// (admit.DefaultPod): a Pod object gets it on create, and the Pods that a
// controller creates from a pod template get it too. Two of its defaults
// change Pod Security verdicts: a volume with no source becomes an emptyDir,
// and in a hostNetwork pod every port gets hostPort = containerPort.
func applyDefaults(meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
	admit.DefaultPod(meta, spec)
}
