package admit

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kilnhq/kiln/manifest"
)

// The schema/… rules: what the API server's create path refuses or warns about.
const (
	RuleUnknownField = "schema/unknown-field"
	RuleType         = "schema/type"
	RuleDecode       = "schema/decode"
	RuleRequired     = "schema/required"
	RuleInvalid      = "schema/invalid"
	RuleUnservedKind = "schema/unserved-version"
	RuleUnknownKind  = "schema/unknown-kind"
	RuleNoCRD        = "schema/no-crd"
	RuleWarning      = "schema/server-warning"
	RuleInternal     = "schema/internal"
)

// decodeTail ends the message of a value the decoder refuses.
const decodeTail = "; the API server cannot decode the object"

var quotedField = regexp.MustCompile(`^(unknown|duplicate) field "(.*)"$`)

// strictProblems turns strict decoding errors (what fieldValidation=Strict,
// kubectl's default, refuses) into problems at their fields.
// obj is the object decoded, for "did you mean" on an unknown field.
func strictProblems(err error, obj any) []Problem {
	var list []error
	if sde, ok := runtime.AsStrictDecodingError(err); ok {
		list = sde.Errors()
	} else {
		list = []error{err}
	}
	var out []Problem
	for _, e := range list {
		m := quotedField.FindStringSubmatch(e.Error())
		if m == nil {
			out = append(out, Problem{Rule: RuleUnknownField, Message: e.Error()})
			continue
		}
		// A duplicate field cannot reach the server from YAML (kubectl keeps
		// the last value, see yaml/duplicate-key); it is refused all the same.
		rule, what := RuleUnknownField, "unknown field"
		hint := "the API server refuses it (kubectl apply validates fields strictly by default); check the spelling and the kind's schema (kubectl explain)"
		if near := nearField(obj, m[2]); near != "" && m[1] == "unknown" {
			hint = fmt.Sprintf("did you mean %q? The API server refuses it (kubectl apply validates fields strictly by default)", near)
		}
		if m[1] == "duplicate" {
			rule, what, hint = RuleDecode, "duplicate field", "remove one of them"
		}
		out = append(out, Problem{Rule: rule, Field: m[2], Message: fmt.Sprintf("%s %q: %s", what, m[2], hint)})
	}
	return out
}

var (
	typeErr     = regexp.MustCompile(`cannot unmarshal (\w+) into Go struct field (\w+)\.(\S+) of type (\S+)`)
	valueErr    = regexp.MustCompile(`cannot unmarshal (\w+) into Go value of type (\S+)`)
	quantityErr = regexp.MustCompile(`quantities must match the regular expression`)
)

// decodeProblem explains an error that stops decoding (a value of the wrong
// type, an invalid quantity), at the field when it can be found; at is the
// path of the value at fault (nil when it cannot be found) and goType the Go
// type the decoder wanted there.
func decodeProblem(err error, kind string, content map[string]any, base []any) (p Problem, at []any, goType string) {
	msg := err.Error()
	if m := typeErr.FindStringSubmatch(msg); m != nil {
		path, want, got := jsonPath(m[3]), goTypeName(m[4]), article(m[1])
		hint := ""
		if want == "a string" && (got == "a number" || got == "a boolean") {
			hint = "; quote it"
		}
		at, entry, ok := findTyped(content, strings.Split(path, "."), m[1], base)
		if !ok {
			path = joinPath(formatPath(base), path)
			return Problem{Rule: RuleType, Field: path, Message: fmt.Sprintf("%s must be %s, not %s%s"+decodeTail, path, want, got, hint)}, nil, ""
		}
		field := formatPath(at)
		if entry {
			container := formatPath(at[:len(at)-1])
			return Problem{Rule: RuleType, Field: field, Message: fmt.Sprintf("%s must be %s, not %s (every entry of %s must be %s)%s"+decodeTail, field, want, got, container, want, hint)}, at, m[4]
		}
		return Problem{Rule: RuleType, Field: field, Message: fmt.Sprintf("%s must be %s, not %s%s"+decodeTail, field, want, got, hint)}, at, m[4]
	}
	if quantityErr.MatchString(msg) {
		if at, v, ok := findBadQuantity(content, base); ok {
			path := formatPath(at)
			return Problem{Rule: RuleType, Field: path, Message: fmt.Sprintf("%s: %q is not a quantity (examples: 500m, 2, 1Gi, 10Mi)"+decodeTail, path, v)}, at, "resource.Quantity"
		}
		return Problem{Rule: RuleType, Message: "a quantity (resources, sizes) is invalid; write it as 500m, 2, 1Gi or 10Mi"}, nil, ""
	}
	if m := valueErr.FindStringSubmatch(msg); m != nil {
		return Problem{Rule: RuleType, Message: fmt.Sprintf("a value must be %s, not %s"+decodeTail, goTypeName(m[2]), article(m[1]))}, nil, ""
	}
	return Problem{Rule: RuleDecode, Message: fmt.Sprintf("the API server cannot decode this %s: %s", kind, msg)}, nil, ""
}

// ExplainDecodeError says in plain words what the API server's decoder
// refused in content, a mapping found at path in an object (a pod template's
// spec, say), and returns the field at fault (path itself when it cannot be
// found) and the message.
func ExplainDecodeError(err error, content map[string]any, path string) (field, message string) {
	var base []any
	for _, seg := range manifest.SplitPath(path) {
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 {
			base = append(base, i)
		} else {
			base = append(base, seg)
		}
	}
	p, _, _ := decodeProblem(err, "object", content, base)
	if p.Field == "" {
		p.Field = path
	}
	return p.Field, strings.TrimSuffix(p.Message, decodeTail)
}

func article(jsonType string) string {
	switch jsonType {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "array":
		return "a list"
	case "object":
		return "a mapping"
	}
	return jsonType
}

func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean (true or false)"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case strings.HasSuffix(t, "IntOrString"):
		return "an integer or a string"
	}
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	return "a mapping (" + t + ")"
}

// quantityKeys are the mappings whose values are quantities.
var quantityKeys = map[string]bool{"limits": true, "requests": true, "capacity": true, "hard": true, "allocatable": true, "max": true, "min": true, "default": true, "defaultRequest": true, "maxLimitRequestRatio": true}

// findBadQuantity finds, depth first in key order, a value the quantity
// parser refuses under a mapping of quantities or a sizeLimit/storage key.
func findBadQuantity(v any, at []any) ([]any, string, bool) {
	switch x := v.(type) {
	case map[string]any:
		last := ""
		if len(at) > 0 {
			last, _ = at[len(at)-1].(string)
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := appendPath(at, k)
			if s, ok := x[k].(string); ok && (quantityKeys[last] || k == "sizeLimit" || k == "storage") {
				if _, err := resource.ParseQuantity(s); err != nil {
					return p, s, true
				}
			}
			if p2, s, ok := findBadQuantity(x[k], p); ok {
				return p2, s, true
			}
		}
	case []any:
		for i, e := range x {
			if p, s, ok := findBadQuantity(e, appendPath(at, i)); ok {
				return p, s, true
			}
		}
	}
	return nil, "", false
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldProblem turns one validation error into a problem, worded as the
// server words it (`spec.selector: Required value`).
func fieldProblem(e *field.Error) Problem {
	rule := RuleInvalid
	if e.Type == field.ErrorTypeRequired {
		rule = RuleRequired
	}
	if e.Field == "" || e.Field == "<nil>" {
		return Problem{Rule: rule, Message: errorBody(e)}
	}
	return Problem{Rule: rule, Field: e.Field, Message: fmt.Sprintf("%s: %s", e.Field, errorBody(e))}
}

// errorBody is the error's body as the server words it, without a bad
// value that is a struct: the server's validation of its internal types
// prints one as a Go value (&core.SecurityContext{Capabilities:
// (*core.Capabilities)(nil), Privileged:(*bool)(0xc000...)...}), which says
// nothing the field path and detail do not, and changes between runs.
func errorBody(e *field.Error) string {
	v := reflect.ValueOf(e.BadValue)
	for v.IsValid() && v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.IsValid() && v.Kind() == reflect.Struct {
		body := e.Type.String()
		if e.Detail != "" {
			body += ": " + e.Detail
		}
		return body
	}
	return e.ErrorBody()
}

// jsonPath drops the Go names of embedded structs that the JSON decoder's
// error puts in a field path (spec.volumes.VolumeSource.fc.lun): JSON field
// names start with a lower-case letter.
func jsonPath(p string) string {
	segs := strings.Split(p, ".")
	out := segs[:0]
	for _, s := range segs {
		if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
			continue
		}
		out = append(out, s)
	}
	return strings.Join(out, ".")
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case int64, float64, int:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}
