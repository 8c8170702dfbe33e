package admit

import (
	"fmt"
	"regexp"
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

var quotedField = regexp.MustCompile(`^(unknown|duplicate) field "(.*)"$`)

// strictProblems turns strict decoding errors (what fieldValidation=Strict,
// kubectl's default, refuses) into problems at their fields.
func strictProblems(err error) []Problem {
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
// type, an invalid quantity), at the field when it can be found.
func decodeProblem(err error, o *manifest.Object, content map[string]any) Problem {
	msg := err.Error()
	if m := typeErr.FindStringSubmatch(msg); m != nil {
		path, want, got := jsonPath(m[3]), goTypeName(m[4]), article(m[1])
		if key, ok := mapValueOfType(content, path, m[1]); ok {
			return Problem{Rule: RuleType, Field: joinPath(path, key), Message: fmt.Sprintf("%s must be %s, not %s (every value of %s must be %s); quote it; the API server cannot decode the object", joinPath(path, key), want, got, path, want)}
		}
		return Problem{Rule: RuleType, Field: path, Message: fmt.Sprintf("%s must be %s, not %s; the API server cannot decode the object", path, want, got)}
	}
	if quantityErr.MatchString(msg) {
		if path, v, ok := findBadQuantity(content, ""); ok {
			return Problem{Rule: RuleType, Field: path, Message: fmt.Sprintf("%s: %q is not a quantity (examples: 500m, 2, 1Gi, 10Mi); the API server cannot decode the object", path, v)}
		}
		return Problem{Rule: RuleType, Message: "a quantity (resources, sizes) is invalid; write it as 500m, 2, 1Gi or 10Mi"}
	}
	if m := valueErr.FindStringSubmatch(msg); m != nil {
		return Problem{Rule: RuleType, Message: fmt.Sprintf("a value must be %s, not %s; the API server cannot decode the object", goTypeName(m[2]), article(m[1]))}
	}
	return Problem{Rule: RuleDecode, Message: fmt.Sprintf("the API server cannot decode this %s: %s", o.Kind, msg)}
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
func findBadQuantity(v any, path string) (string, string, bool) {
	switch x := v.(type) {
	case map[string]any:
		keys := sortedKeys(x)
		last := path[strings.LastIndexByte(path, '.')+1:]
		for _, k := range keys {
			p := joinPath(path, k)
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
			if p, s, ok := findBadQuantity(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, s, true
			}
		}
	}
	return "", "", false
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
		return Problem{Rule: rule, Message: e.ErrorBody()}
	}
	return Problem{Rule: rule, Field: e.Field, Message: fmt.Sprintf("%s: %s", e.Field, e.ErrorBody())}
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

// mapValueOfType finds, when path names a mapping in content, the first key
// (in order) whose value has the JSON type the decoder refused.
func mapValueOfType(content map[string]any, path, jsonType string) (string, bool) {
	var v any = content
	for _, seg := range manifest.SplitPath(path) {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			var i int
			if _, err := fmt.Sscanf(seg, "%d", &i); err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	for _, k := range sortedKeys(m) {
		if jsonTypeOf(m[k]) == jsonType {
			return k, true
		}
	}
	return "", false
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
