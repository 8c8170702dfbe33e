package admit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kilnhq/kiln/manifest"
)

// NextSuffix ends the message of a problem the server reports only once the
// problems before it are fixed: it stops at the first value it cannot decode,
// and checks neither unknown fields nor validation before the object decodes.
const NextSuffix = " (found after the first error: the server reports it once that is fixed)"

// maxDecodeErrors bounds how many values of the wrong type are looked for in
// one object.
const maxDecodeErrors = 50

// decoded is a manifest decoded as the server decodes it and, when the
// server's decoder stops at a value of the wrong type, decoded again without
// that value, until the rest decodes: so that every problem is found in one
// run, as the server would report them one fix after another.
type decoded struct {
	// obj is the object without the values the decoder refused; nil when
	// even that cannot be decoded.
	obj runtime.Object
	// problems are the decoder's: the values of the wrong type (the first
	// is the server's answer, each next one its answer once the previous
	// is fixed), then the unknown and duplicate fields.
	problems []Problem
	// removed are the paths of the values left out; unknown those of the
	// unknown fields. Validation of obj says nothing reliable at them,
	// around them, or (for a misspelled field) about its siblings.
	removed, unknown []string
	// typeErrors is how many values of the wrong type were left out.
	typeErrors int
	// zeroed are the values left out with the zero value of the type the
	// decoder wanted: the other stand-in, which validation is run on too.
	zeroed []zeroAt
}

// zeroAt is the zero value of the type the decoder wanted at a path.
type zeroAt struct {
	at    []any
	value any
}

// decode decodes data (the JSON of content) strictly into gvk's type.
func (a *Admitter) decode(o *manifest.Object, gvk schema.GroupVersionKind, content map[string]any, data []byte) decoded {
	var d decoded
	work, copied := content, false
	for range maxDecodeErrors {
		obj, _, err := a.strict.Decode(data, &gvk, nil)
		if err == nil || runtime.IsStrictDecodingError(err) {
			if err != nil {
				for _, p := range strictProblems(err, obj) {
					if d.typeErrors > 0 {
						p.markNext()
					}
					d.problems = append(d.problems, p)
					d.unknown = append(d.unknown, p.Field)
				}
			}
			d.obj = obj
			return d
		}
		p, at, goType := decodeProblem(err, o.Kind, work, nil)
		if d.typeErrors > 0 {
			p.markNext()
		}
		d.problems = append(d.problems, p)
		d.typeErrors++
		if at == nil {
			return d // the decoder's error names no value kiln can find: stop at it, as the server does
		}
		if !copied {
			work, copied = runtime.DeepCopyJSON(content), true
		}
		if !removeAt(work, at) {
			return d
		}
		d.removed = append(d.removed, formatPath(at))
		d.zeroed = append(d.zeroed, zeroAt{at, zeroOf(goType)})
		if data, err = json.Marshal(work); err != nil {
			return d
		}
	}
	return d
}

// markNext marks a problem as one the server reports only once the first
// is fixed.
func (p *Problem) markNext() {
	if !p.Next {
		p.Next = true
		p.Message += NextSuffix
	}
}

// hidden reports whether validation's problem at field may come from a value
// the decoder left out or from a misspelled field, rather than from the
// object the user will send once those are fixed: it is at, under or above
// a value left out, or under the mapping that holds an unknown field (where
// the misspelled field's intended name is).
func (d *decoded) hidden(field string) bool {
	if field == "" {
		return false
	}
	for _, r := range d.removed {
		if within(field, r) || within(r, field) {
			return true
		}
	}
	for _, u := range d.unknown {
		parent := parentPath(u)
		if parent == "" || within(field, parent) {
			return true
		}
	}
	return false
}

// within reports whether path is base or a path under it.
func within(path, base string) bool {
	if !strings.HasPrefix(path, base) {
		return false
	}
	rest := path[len(base):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// parentPath is the path of the mapping or list that holds path's last
// segment ("" at the top).
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		return path[:strings.LastIndexByte(path, '[')]
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// formatPath writes a path of keys (strings) and list indexes (ints) as
// field paths are written: spec.volumes[0].fc.lun, metadata.labels[a.b/c].
func formatPath(at []any) string {
	path := ""
	for _, s := range at {
		switch x := s.(type) {
		case int:
			path += fmt.Sprintf("[%d]", x)
		case string:
			path = joinPath(path, x)
		}
	}
	return path
}

// zeroOf is the zero value, as JSON, of a Go type the decoder names.
func zeroOf(goType string) any {
	t := strings.TrimPrefix(goType, "*")
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"), strings.HasSuffix(t, "IntOrString"):
		return int64(0)
	case strings.HasSuffix(t, "Quantity"):
		return "0"
	case t == "string":
		return ""
	case t == "bool":
		return false
	case strings.HasPrefix(t, "[]"):
		return []any{}
	}
	return map[string]any{}
}

// setAt replaces the value at path (which exists, or was left out of a
// mapping).
func setAt(content map[string]any, at []any, v any) bool {
	return atPath(content, at, func(m map[string]any, key string) bool {
		m[key] = v
		return true
	}, func(l []any, i int) bool {
		l[i] = v
		return true
	})
}

// removeAt leaves out the value at path: a key is deleted from its mapping,
// a list entry becomes null (so the indexes of the others stay as written).
func removeAt(content map[string]any, at []any) bool {
	return atPath(content, at, func(m map[string]any, key string) bool {
		if _, ok := m[key]; !ok {
			return false
		}
		delete(m, key)
		return true
	}, func(l []any, i int) bool {
		if l[i] == nil {
			return false
		}
		l[i] = nil
		return true
	})
}

// atPath finds the mapping or list that holds the last step of path and
// calls inMap or inList with it; false when the path does not lead there.
func atPath(content map[string]any, at []any, inMap func(map[string]any, string) bool, inList func([]any, int) bool) bool {
	var parent any = content
	for _, s := range at[:len(at)-1] {
		parent = step(parent, s)
		if parent == nil {
			return false
		}
	}
	switch last := at[len(at)-1].(type) {
	case string:
		m, ok := parent.(map[string]any)
		return ok && inMap(m, last)
	case int:
		l, ok := parent.([]any)
		return ok && last >= 0 && last < len(l) && inList(l, last)
	}
	return true
}

func step(v any, s any) any {
	switch x := s.(type) {
	case string:
		m, _ := v.(map[string]any)
		return m[x]
	case int:
		l, _ := v.([]any)
		if x < 0 || x >= len(l) {
			return nil
		}
		return l[x]
	}
	return nil
}

// findTyped finds the value the decoder refused: its error names the Go
// struct fields on the way (segs, without list indexes or mapping keys) and
// the JSON type it found. The search goes as the decoder reads, keys in
// sorted order (the order of the JSON kiln sends), and returns the path of
// the first value of that type: at the end of segs, the value itself, else
// an entry (entry is set) of the list or mapping there.
func findTyped(v any, segs []string, jsonType string, at []any) (path []any, entry, ok bool) {
	if len(segs) == 0 {
		if jsonTypeOf(v) == jsonType {
			return at, false, true
		}
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				if jsonTypeOf(e) == jsonType {
					return appendPath(at, i), true, true
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if jsonTypeOf(x[k]) == jsonType {
					return appendPath(at, k), true, true
				}
			}
		}
		return nil, false, false
	}
	switch x := v.(type) {
	case []any:
		// A list has no segment of its own in the decoder's path.
		for i, e := range x {
			if p, entry, ok := findTyped(e, segs, jsonType, appendPath(at, i)); ok {
				return p, entry, true
			}
		}
	case map[string]any:
		if next, ok := x[segs[0]]; ok {
			if p, entry, ok := findTyped(next, segs[1:], jsonType, appendPath(at, segs[0])); ok {
				return p, entry, true
			}
		}
		// Nor has a mapping key (a map of structs): look in each value.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if _, isMap := x[k].(map[string]any); !isMap || k == segs[0] {
				continue
			}
			if p, entry, ok := findTyped(x[k], segs, jsonType, appendPath(at, k)); ok {
				return p, entry, true
			}
		}
	}
	return nil, false, false
}

func appendPath(at []any, s any) []any {
	return append(append(make([]any, 0, len(at)+1), at...), s)
}
