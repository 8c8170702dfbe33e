package admit

import (
	"reflect"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/internal/editdist"
)

// nearField is the field of obj's type nearest in spelling to the unknown
// field at path ("spec.template.spec.containers[0].imagePullPolice" →
// "imagePullPolicy"), "" when none is close or the path leads through no
// Go struct (a map, a raw extension).
func nearField(obj any, path string) string {
	if obj == nil {
		return ""
	}
	t := reflect.TypeOf(obj)
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		name, _, _ := strings.Cut(seg, "[")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return ""
		}
		if i == len(segs)-1 {
			return nearest(name, jsonFields(t, nil))
		}
		f, ok := jsonField(t, name)
		if !ok {
			return ""
		}
		t = f
		for n := strings.Count(seg, "["); n > 0; n-- {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array && t.Kind() != reflect.Map {
				return ""
			}
			t = t.Elem()
		}
	}
	return ""
}

// jsonFields lists the JSON names of a struct type's fields, inline ones
// included.
func jsonFields(t reflect.Type, out []string) []string {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = jsonFields(ft, out)
			}
		case name != "" && f.IsExported():
			out = append(out, name)
		}
	}
	return out
}

// jsonField is the type of the field of t with the JSON name name.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		n, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == name && n != "" {
			return f.Type, true
		}
		if n == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if got, ok := jsonField(ft, name); ok {
					return got, true
				}
			}
		}
	}
	return nil, false
}

// nearest is the name closest to name in edit distance, if close (at most
// a third of its length and one more), the first of equals.
func nearest(name string, names []string) string {
	best, bestD := "", len(name)/3+2
	for _, k := range slices.Sorted(slices.Values(names)) {
		if d := editdist.Distance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}
