package compiler

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"
)

// TestSchemaFieldsMatchGoTypes walks schemas/app.cue's #App and the App
// type side by side and fails on a field the schema has and the Go types
// lack (it would be accepted by the schema and silently dropped by
// decode), and on a tagged Go field that no schema struct decoded into
// that type has (dead code, or a field forgotten in the schema).
func TestSchemaFieldsMatchGoTypes(t *testing.T) {
	ev, err := getEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	defer evaluators.Put(ev)
	w := &fieldWalk{seen: map[reflect.Type]map[string]bool{}}
	w.walk(ev.app, reflect.TypeOf(App{}), "#App")
	// The deepest types are reached only through maps, lists and
	// disjunctions: not seeing them means the walk lost its way.
	for _, deep := range []any{Probe{}, HTTPGet{}, EnvValue{}, Role{}, Toleration{}} {
		if typ := reflect.TypeOf(deep); len(w.seen[typ]) == 0 {
			t.Fatalf("the walk never reached %s: it is broken", typ.Name())
		}
	}
	sort.Strings(w.missing)
	for _, m := range w.missing {
		t.Errorf("schemas/app.cue has %s, the Go types in compiler/spec.go have no field with that JSON tag: add one, or specs that set it lose it without a word", m)
	}
	for typ, names := range w.seen {
		for _, f := range jsonFields(typ) {
			if !names[f] {
				t.Errorf("compiler/spec.go %s has JSON field %q that no struct of schemas/app.cue decoded into it has: add it to the schema or remove it", typ.Name(), f)
			}
		}
	}
}

type fieldWalk struct {
	missing []string
	// seen: for each Go struct type, the schema field names decoded into it.
	seen map[reflect.Type]map[string]bool
}

func (w *fieldWalk) walk(v cue.Value, typ reflect.Type, path string) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
		if typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Uint8 {
			return // json.RawMessage: any JSON, passed through
		}
		switch typ.Kind() {
		case reflect.Slice:
			v = v.LookupPath(cue.MakePath(cue.AnyIndex))
			path += "[]"
		case reflect.Map:
			for _, e := range mapValues(v) {
				w.walk(e, typ.Elem(), path+"[*]")
			}
			return
		}
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || len(jsonFields(typ)) == 0 {
		return // a scalar, or a type with its own UnmarshalJSON and no tagged fields (Nodes, Port)
	}
	names := w.seen[typ]
	if names == nil {
		names = map[string]bool{}
		w.seen[typ] = names
	}
	for _, s := range structsOf(v) {
		it, err := s.Fields(cue.Optional(true))
		if err != nil {
			continue
		}
		for it.Next() {
			name := it.Selector().Unquoted()
			if path == "#App" && (name == "apiVersion" || name == "kind") {
				continue // checked by header, not decoded
			}
			names[name] = true
			f, ok := fieldByTag(typ, name)
			if !ok {
				w.missing = append(w.missing, path+"."+name)
				continue
			}
			w.walk(it.Value(), f.Type, path+"."+name)
		}
	}
}

// mapValues is the values a map's entries are constrained by: its
// pattern constraint ({[#DNSLabel]: T}: T) and its named keys
// ({chief?: #Role, ps?: #Role}).
func mapValues(v cue.Value) []cue.Value {
	var out []cue.Value
	for _, s := range structsOf(v) {
		it, err := s.Fields(cue.Optional(true), cue.Patterns(true))
		if err != nil {
			continue
		}
		for it.Next() {
			out = append(out, it.Value())
		}
	}
	return out
}

// structsOf is v's struct values: v itself, or the struct disjuncts of a
// disjunction (string | #EnvRef).
func structsOf(v cue.Value) []cue.Value {
	if op, args := v.Expr(); op == cue.OrOp {
		var out []cue.Value
		for _, a := range args {
			out = append(out, structsOf(a)...)
		}
		return out
	}
	if v.IncompleteKind() == cue.StructKind {
		return []cue.Value{v}
	}
	return nil
}

// jsonFields is the JSON names of typ's tagged fields.
func jsonFields(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func fieldByTag(typ reflect.Type, name string) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
