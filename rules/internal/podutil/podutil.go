// Package podutil reads pod specs and other values out of an object's
// decoded content (manifest.Object.Content) for kiln's own rule packages.
// Nothing here modifies the content it is given.
package podutil

import (
	"strconv"

	"github.com/kilnhq/kiln/manifest"
)

// At returns the value at a field path (see manifest.SplitPath) in content, or nil.
func At(content map[string]any, path string) any {
	return manifest.ValueAt(content, path)
}

// Map returns m[key] (or m[key1][key2]…) as a mapping, or nil.
func Map(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		if m == nil {
			return nil
		}
		m, _ = m[k].(map[string]any)
	}
	return m
}

// List returns m[key] as a list, or nil.
func List(m map[string]any, key string) []any {
	l, _ := m[key].([]any)
	return l
}

// Str returns m[key] as a string ("" when absent or not a string).
func Str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// Int returns m[key] as an integer; ok is false when it is absent or not an integral number.
func Int(m map[string]any, key string) (n int64, ok bool) {
	return AsInt(m[key])
}

// AsInt converts a decoded integral number to int64.
func AsInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

// IntOr returns m[key] as an integer, or def when it is absent or not a number.
func IntOr(m map[string]any, key string, def int64) int64 {
	if n, ok := Int(m, key); ok {
		return n
	}
	return def
}

// Container is one container of a pod spec, with its field path in the object.
type Container struct {
	// Path is e.g. "spec.template.spec.initContainers[0]".
	Path string
	// Init is true for initContainers (native sidecars included).
	Init  bool
	Index int
	Name  string
	Image string
	M     map[string]any
}

// Field returns the path of a field of the container, e.g. c.Field("restartPolicy").
func (c Container) Field(f string) string { return c.Path + "." + f }

// RestartAlways reports whether the container sets restartPolicy: Always
// (for an init container: a native sidecar).
func (c Container) RestartAlways() bool { return Str(c.M, "restartPolicy") == "Always" }

// Containers returns the init containers, then the regular containers, of
// the pod spec at specPath in content.
func Containers(content map[string]any, specPath string) []Container {
	spec, _ := At(content, specPath).(map[string]any)
	if spec == nil {
		return nil
	}
	var out []Container
	for _, key := range []string{"initContainers", "containers"} {
		for i, item := range List(spec, key) {
			m, _ := item.(map[string]any)
			if m == nil {
				continue
			}
			out = append(out, Container{
				Path:  specPath + "." + key + "[" + strconv.Itoa(i) + "]",
				Init:  key == "initContainers",
				Index: i,
				Name:  Str(m, "name"),
				Image: Str(m, "image"),
				M:     m,
			})
		}
	}
	return out
}

// Spec returns the pod spec at specPath in content, or nil.
func Spec(content map[string]any, specPath string) map[string]any {
	m, _ := At(content, specPath).(map[string]any)
	return m
}
