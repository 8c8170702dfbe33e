package compiler

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"github.com/kilnhq/kiln/internal/golden"
	"sigs.k8s.io/yaml"
)

// specReference is the App spec reference generated from schemas/app.cue.
const specReference = "../docs/app-spec.md"

// TestSpecReference holds docs/app-spec.md to schemas/app.cue: every field
// with its doc comment and its type, each leaf with an example (from the
// examples when one sets it, else the value TestEveryFieldReachesOutput
// sets). go test ./compiler -run TestSpecReference -update rewrites it.
func TestSpecReference(t *testing.T) {
	ev, err := getEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	var fields []docField
	specFields(ev.app, "", &fields)
	evaluators.Put(ev)
	var leaves []string
	for _, f := range fields {
		if f.leaf {
			leaves = append(leaves, f.path)
		}
	}
	examples := exampleValues(t, leaves)
	for _, c := range reachChanges() {
		leaf, err := leafOf(leaves, c.at)
		if err != nil {
			continue // TestEveryFieldReachesOutput reports it
		}
		if _, ok := examples[leaf]; !ok {
			examples[leaf] = example{at: c.at, value: c.to, from: reachBase}
		}
	}
	var b strings.Builder
	b.WriteString("# App spec reference\n\n" +
		"Every field of the App spec (`apiVersion: kiln.dev/v1alpha1`, `kind: App`), generated from\n" +
		"[`schemas/app.cue`](../schemas/app.cue) by `go test ./compiler -run TestSpecReference -update`\n" +
		"(the test fails when this file and the schema disagree: do not edit it by hand). One line per\n" +
		"field: its path (`*` a key of your choice, `[]` an item of a list), its type as the schema\n" +
		"writes it (`*x` is the default; **required** fields must be given), its doc comment, and an\n" +
		"example from `examples/` (or from the spec `TestEveryFieldReachesOutput` starts from). What\n" +
		"each field compiles to is in [examples/README.md](../examples/README.md#what-a-spec-compiles-to).\n")
	for _, f := range fields {
		if !f.leaf && strings.Count(f.path, ".") <= 1 {
			fmt.Fprintf(&b, "\n## `%s`\n\n", f.path)
			if f.doc != "" {
				b.WriteString(f.doc + "\n\n")
			}
			continue
		}
		fmt.Fprintf(&b, "- `%s`", f.path)
		if f.required {
			b.WriteString(" **required**")
		}
		if f.leaf {
			fmt.Fprintf(&b, " `%s`", f.typ)
		}
		if f.doc != "" {
			b.WriteString(" — " + f.doc)
		}
		if ex, ok := examples[f.path]; ok {
			v, _ := json.Marshal(ex.value)
			fmt.Fprintf(&b, " Example: `%s: %s` (%s)", ex.at, v, ex.from)
		}
		b.WriteString("\n")
	}
	golden.Check(t, specReference, []byte(strings.TrimRight(b.String(), "\n")+"\n"))
}

// docField is one field of the schema.
type docField struct {
	path, doc, typ string
	leaf, required bool
}

// specFields lists every field of v in schema order, as schemaLeaves walks
// them: a field holding structs is listed, then its fields.
func specFields(v cue.Value, path string, out *[]docField) {
	for _, s := range structsOf(v) {
		it, err := s.Fields(cue.Optional(true), cue.Patterns(true))
		if err != nil {
			continue
		}
		for it.Next() {
			name := "*"
			if it.Selector().Type()&cue.PatternConstraint == 0 {
				name = it.Selector().Unquoted()
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			fv := it.Value()
			f := docField{path: p, doc: docOf(fv), required: it.Selector().ConstraintType() == cue.RequiredConstraint}
			inner := fv
			if elem := fv.LookupPath(cue.MakePath(cue.AnyIndex)); fv.IncompleteKind() == cue.ListKind && len(structsOf(elem)) > 0 {
				inner, f.path = elem, p+"[]"
			}
			structs := structsOf(inner)
			f.leaf = len(structs) == 0 || hasScalarAlternative(inner)
			if f.leaf {
				f.typ = typeOf(fv)
			}
			*out = append(*out, f)
			if len(structs) > 0 {
				specFields(inner, f.path, out)
			}
		}
	}
}

// docOf is a field's doc comment as one paragraph.
func docOf(v cue.Value) string {
	var parts []string
	for _, g := range v.Doc() {
		if text := strings.TrimSpace(g.Text()); text != "" {
			parts = append(parts, strings.Join(strings.Fields(text), " "))
		}
	}
	return strings.Join(parts, " ")
}

// typeOf is a leaf's constraint as CUE writes it, on one line.
func typeOf(v cue.Value) string {
	s := strings.Join(strings.Fields(fmt.Sprint(v)), " ")
	return strings.ReplaceAll(s, "`", "'")
}

// example is a value a spec gives a field.
type example struct {
	at    string
	value any
	from  string
}

// exampleValues finds, for each leaf, the first example spec that sets it.
func exampleValues(t *testing.T, leaves []string) map[string]example {
	out := map[string]example{}
	split := make([][]string, len(leaves))
	for i, l := range leaves {
		split[i] = strings.Split(l, ".")
	}
	for _, name := range exampleNames {
		file := filepath.Join("..", "examples", name, "app.yaml")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var spec obj
		if err := yaml.Unmarshal(data, &spec); err != nil {
			t.Fatal(err)
		}
		var walk func(v any, segs []string)
		walk = func(v any, segs []string) {
			for i, l := range split {
				if len(l) == len(segs) && segsMatch(l, segs) {
					if _, ok := out[leaves[i]]; !ok {
						out[leaves[i]] = example{at: joinPath(segs), value: v, from: "examples/" + name}
					}
					return
				}
			}
			switch x := v.(type) {
			case obj:
				for _, k := range sortedKeys(x) {
					walk(x[k], append(append([]string(nil), segs...), k))
				}
			case list:
				if len(segs) == 0 {
					return
				}
				for i, e := range x {
					s := append([]string(nil), segs...)
					s[len(s)-1] += "[" + itoa(i) + "]"
					walk(e, s)
				}
			}
		}
		walk(spec, nil)
	}
	return out
}

// joinPath joins path segments, quoting keys with dots or slashes.
func joinPath(segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		if strings.ContainsAny(s, `./`) && !strings.Contains(s, "[") {
			b.WriteString(`["` + s + `"]`)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}
