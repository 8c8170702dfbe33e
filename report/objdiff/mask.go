package objdiff

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"sigs.k8s.io/yaml"
)

// minSecret is the shortest Secret value looked for in other objects'
// fields: shorter ones ("true", "admin") would mask what is no secret.
const minSecret = 8

// Masker keeps Secret values out of a diff: a Secret's data and stringData
// values become hash markers (equal values, equal markers: whether a value
// changed still shows), and any other field's string that holds one of the
// Secrets' values (a chart's values taken from a Secret and rendered into a
// ConfigMap or an env value) is replaced by its marker as a whole.
type Masker struct {
	values []string
}

// Marker is the hash marker that stands for a secret value.
func Marker(value []byte) string {
	sum := sha256.Sum256(value)
	return "<secret sha256:" + hex.EncodeToString(sum[:6]) + ">"
}

// IsSecret reports whether an object of this apiVersion and kind is a
// core Secret.
func IsSecret(apiVersion, kind string) bool { return apiVersion == "v1" && kind == "Secret" }

// Learn records the values of a Secret's content (data decoded, and
// stringData), so that Mask hides them wherever they appear.
//
// A value that is a YAML mapping (a values.yaml a HelmRelease takes with
// valuesFrom) is looked for whole and by each of its string leaves, which
// a chart renders one by one.
func (m *Masker) Learn(content map[string]any) {
	for _, v := range secretValues(content) {
		m.learn(string(v))
		var doc map[string]any
		if yaml.Unmarshal(v, &doc) == nil {
			m.learnLeaves(doc)
		}
	}
}

func (m *Masker) learn(s string) {
	if len(s) >= minSecret {
		m.values = append(m.values, s)
	}
}

func (m *Masker) learnLeaves(v any) {
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			m.learnLeaves(x)
		}
	case []any:
		for _, x := range t {
			m.learnLeaves(x)
		}
	case string:
		m.learn(t)
	}
}

// secretValues are the values of a Secret: data decoded from base64 (as
// written when it does not decode), stringData as written.
func secretValues(content map[string]any) [][]byte {
	var out [][]byte
	if data, ok := content["data"].(map[string]any); ok {
		for _, v := range data {
			if s, ok := v.(string); ok {
				out = append(out, decoded(s))
			}
		}
	}
	if data, ok := content["stringData"].(map[string]any); ok {
		for _, v := range data {
			if s, ok := v.(string); ok {
				out = append(out, []byte(s))
			}
		}
	}
	return out
}

func decoded(s string) []byte {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b
	}
	return []byte(s)
}

// Mask returns the content with what is secret in it replaced: a Secret's
// data and stringData values by their markers (the decoded value's, so
// that data and stringData of one value compare equal), and in any object
// every string that holds a learnt Secret value by its own marker. content
// is not changed.
func (m *Masker) Mask(apiVersion, kind string, content map[string]any) map[string]any {
	out := m.maskValue(content).(map[string]any)
	if !IsSecret(apiVersion, kind) {
		return out
	}
	for _, field := range []string{"data", "stringData"} {
		data, ok := content[field].(map[string]any)
		if !ok {
			continue
		}
		masked := make(map[string]any, len(data))
		for k, v := range data {
			s, _ := v.(string)
			if field == "data" {
				masked[k] = Marker(decoded(s))
			} else {
				masked[k] = Marker([]byte(s))
			}
		}
		out[field] = masked
	}
	return out
}

func (m *Masker) maskValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = m.maskValue(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = m.maskValue(x)
		}
		return out
	case string:
		for _, s := range m.values {
			if strings.Contains(t, s) {
				return Marker([]byte(t))
			}
		}
	}
	return v
}
