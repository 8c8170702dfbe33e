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
func Decode(file string, n *yaml.Node) (any, error) { return decode(file, n, nil) }

// decode is Decode with strings shared through in (nil: none shared).
func decode(file string, n *yaml.Node, in interner) (any, error) {
	d := decoder{file: file, budget: maxAliasNodes, intern: in}
	return d.node(n, 0)
}

type decoder struct {
	file   string
	intern interner
	// budget counts down the nodes visited inside alias expansions.
	budget  int
	inAlias int
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
		if _, dup := out[k.Value]; dup {
			return nil, d.errorf(k, "duplicate key %q; remove one of them", k.Value)
		}
		val, err := d.node(v, depth+1)
		if err != nil {
			return nil, err
		}
		out[d.intern.key(k.Value)] = val
	}
	return out, nil
}

// merge applies a YAML merge key: keys already present win.
func (d *decoder) merge(out map[string]any, v *yaml.Node, depth int) error {
	src := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		src = v.Content
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
			if _, set := out[k]; !set {
				out[k] = x
			}
		}
	}
	return nil
}

func (d *decoder) scalar(n *yaml.Node) (any, error) {
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
			return f, nil
		}
	}
	return d.intern.value(n.Value), nil
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
