package manifest

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxAliasNodes bounds how many nodes one document may expand to through
// aliases, so that an alias bomb ("billion laughs") fails fast instead of
// exhausting memory. Documents without aliases are not limited by it.
const maxAliasNodes = 100_000

// maxDepth bounds nesting, so that a pathological document cannot overflow the stack.
const maxDepth = 1000

// Decode converts a YAML node to JSON-compatible Go values as the API server
// would see them after YAML-to-JSON conversion: mappings become
// map[string]any, sequences []any, integers int64, floats float64. Duplicate
// keys, non-scalar keys, excessive aliasing and excessive nesting are errors
// that name file, line and column.
func Decode(file string, n *yaml.Node) (any, error) {
	v, _, err := decode(file, n, nil)
	return v, err
}

// Note is something kubectl reads differently from what the text suggests:
// a YAML 1.1 boolean or number (NoteImplicitType), a duplicate key whose
// last value wins (NoteDuplicateKey). The value is read as kubectl reads it.
type Note struct {
	Rule    string
	Pos     Position
	Message string
}

// The rules of reading notes.
const (
	NoteImplicitType = "yaml/implicit-type"
	NoteDuplicateKey = "yaml/duplicate-key"
)

// decode is Decode with strings shared through in (nil: none shared), and
// the reading notes.
func decode(file string, n *yaml.Node, in interner) (any, []Note, error) {
	d := decoder{file: file, budget: maxAliasNodes, intern: in}
	v, err := d.node(n, 0)
	return v, d.notes, err
}

type decoder struct {
	file   string
	intern interner
	// budget counts down the nodes visited inside alias expansions.
	budget  int
	inAlias int
	// notes collects what kubectl reads differently from what a reader may expect.
	notes []Note
	// fileMode is set while decoding a scalar that holds a file mode.
	fileMode bool
}

// note records a reading note at a node (once per node: aliases repeat nodes).
func (d *decoder) note(n *yaml.Node, rule, msg string) {
	if d.inAlias > 0 {
		return
	}
	d.notes = append(d.notes, Note{Rule: rule, Pos: Position{File: d.file, Line: n.Line, Column: n.Column}, Message: msg})
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) error {
	return &Error{Pos: Position{File: d.file, Line: n.Line, Column: n.Column}, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) node(n *yaml.Node, depth int) (any, error) {
	if d.inAlias > 0 {
		d.budget--
		if d.budget < 0 {
			return nil, d.errorf(n, "aliases expand to more than %d nodes (an alias bomb?); write the values out or simplify the anchors", maxAliasNodes)
		}
	}
	if depth > maxDepth {
		return nil, d.errorf(n, "document is nested more than %d levels deep", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.node(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, d.errorf(n, "unknown alias %q", n.Value)
		}
		d.inAlias++
		v, err := d.node(n.Alias, depth+1)
		d.inAlias--
		return v, err
	case yaml.MappingNode:
		return d.mapping(n, depth)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.node(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		return d.scalar(n)
	}
	return nil, d.errorf(n, "unsupported YAML node")
}

func (d *decoder) mapping(n *yaml.Node, depth int) (any, error) {
	out := make(map[string]any, len(n.Content)/2)
	var keyAt map[string]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			if err := d.merge(out, v, depth); err != nil {
				return nil, err
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, d.errorf(k, "mapping key must be a string, found a %s", kindName(k))
		}
		key := d.key(k)
		if prev, dup := keyAt[key]; dup && d.inAlias == 0 {
			d.note(k, NoteDuplicateKey, fmt.Sprintf("duplicate key %q (first at line %d): kubectl keeps the last value and drops the first; remove one of them", key, prev.Line))
		}
		d.fileMode = v.Kind == yaml.ScalarNode && isFileMode(n, key)
		val, err := d.node(v, depth+1)
		d.fileMode = false
		if err != nil {
			return nil, err
		}
		out[d.intern.key(key)] = val
		if keyAt == nil {
			keyAt = make(map[string]*yaml.Node, len(n.Content)/2)
		}
		keyAt[key] = k
	}
	return out, nil
}

// isFileMode reports whether the value of key in mapping m is a file mode:
// a defaultMode (secret, configMap, downwardAPI and projected volumes), or
// a mode beside a path (their items; files in other objects, such as Argo
// Workflows artifacts). They are int32 fields documented as octal, so 0644
// there means what it says. Matched by name in any object, so pod specs
// inside custom resources are covered too.
func isFileMode(m *yaml.Node, key string) bool {
	if key == "defaultMode" {
		return true
	}
	if key != "mode" {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "path" {
			return true
		}
	}
	return false
}

// merge applies a YAML merge key as kubectl's YAML reader (YAML 1.1,
// go.yaml.in/yaml/v2) does: in document order, so the merged keys replace
// keys set before the "<<" and keys after it replace merged ones; of a list
// of merged mappings, the earlier ones win.
func (d *decoder) merge(out map[string]any, v *yaml.Node, depth int) error {
	src := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		src = nil
		for i := len(v.Content) - 1; i >= 0; i-- {
			src = append(src, v.Content[i])
		}
	}
	for _, s := range src {
		m, err := d.node(s, depth+1)
		if err != nil {
			return err
		}
		mm, ok := m.(map[string]any)
		if !ok {
			return d.errorf(s, "merge key (<<) needs a mapping")
		}
		for k, x := range mm {
			out[k] = x
		}
	}
	return nil
}

// key returns a mapping key as the JSON kubectl sends spells it: YAML 1.1
// reads a plain key such as `on`, `y` or `1e3` as a boolean or number, and
// the YAML-to-JSON conversion then writes it as "true" or "1000".
func (d *decoder) key(k *yaml.Node) string {
	if !plain(k) {
		return k.Value
	}
	v, err := d.scalar(k)
	if err != nil {
		return k.Value
	}
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return "null"
	}
	return k.Value
}

// plain reports whether a scalar is plain (unquoted, untagged): only those
// are resolved to booleans and numbers.
func plain(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Style == 0
}

// yaml11Bools are the plain scalars YAML 1.1 (and so kubectl) reads as
// booleans beyond true and false, which YAML 1.2 reads as strings.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

func (d *decoder) scalar(n *yaml.Node) (any, error) {
	if plain(n) {
		if b, ok := yaml11Bools[n.Value]; ok {
			d.note(n, NoteImplicitType, fmt.Sprintf("%s is read as the boolean %t (YAML 1.1, as kubectl reads YAML); quote it (\"%s\") if you mean the string", n.Value, b, n.Value))
			return b, nil
		}
		if strings.HasPrefix(n.Value, "0o") || strings.HasPrefix(n.Value, "-0o") || strings.HasPrefix(n.Value, "+0o") {
			d.note(n, NoteImplicitType, fmt.Sprintf("%s is read as a string (YAML 1.1, as kubectl reads YAML, has no 0o octals); write 0%s for an octal number or quote it", n.Value, strings.TrimLeft(n.Value, "+-0o")))
			return d.intern.value(n.Value), nil
		}
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	case "!!int":
		s := strings.ReplaceAll(n.Value, "_", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			if plain(n) && legacyOctal(s) && !d.fileMode {
				d.note(n, NoteImplicitType, fmt.Sprintf("%s is read as the octal number %d (YAML 1.1, as kubectl reads YAML); quote it if you mean a string, or write %d", n.Value, i, i))
			}
			return i, nil
		}
		if strings.HasPrefix(s, "0o") {
			if i, err := strconv.ParseInt(s[2:], 8, 64); err == nil {
				return i, nil
			}
		}
		// Too large for int64: JSON would carry it as a float.
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
	case "!!float":
		switch strings.ToLower(n.Value) {
		case ".inf", "+.inf":
			return math.Inf(1), nil
		case "-.inf":
			return math.Inf(-1), nil
		case ".nan":
			return math.NaN(), nil
		}
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil {
			if plain(n) && strings.ContainsAny(n.Value, "eE") {
				d.note(n, NoteImplicitType, fmt.Sprintf("%s is read as the number %s (YAML 1.1, as kubectl reads YAML); quote it if you mean a string", n.Value, strconv.FormatFloat(f, 'g', -1, 64)))
			}
			return f, nil
		}
	}
	return d.intern.value(n.Value), nil
}

// legacyOctal reports a YAML 1.1 octal such as 0755 (not 0, not 0x…).
func legacyOctal(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return len(s) > 1 && s[0] == '0' && s[1] >= '0' && s[1] <= '7'
}

// interner shares equal short strings among the objects of one file: the
// keys and many values of Kubernetes objects repeat ("name", "image",
// "IfNotPresent"), and each shared value also saves its interface box.
// A nil interner shares nothing.
type interner map[string]any

// maxInterned is the longest string shared; longer ones rarely repeat.
const maxInterned = 64

func (in interner) value(s string) any {
	if in == nil || len(s) > maxInterned {
		return s
	}
	if v, ok := in[s]; ok {
		return v
	}
	v := any(s)
	in[s] = v
	return v
}

func (in interner) key(s string) string {
	if in == nil || len(s) > maxInterned {
		return s
	}
	return in.value(s).(string)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}
