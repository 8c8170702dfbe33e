package compiler

import (
	"strconv"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Compiled objects are built as YAML node trees, key order fixed by the
// emitters (apiVersion, kind, metadata, spec, …), so output is the same on
// every run. Every node carries the line and column of the spec node that
// produced it, so that manifest.Object.Locate on a compiled object answers
// with a place in the spec.

// pos is a place in the spec that produced a node.
type pos struct{ line, col int }

func posOf(p manifest.Position) pos { return pos{p.Line, p.Column} }

func (p pos) set(n *yaml.Node) *yaml.Node {
	n.Line, n.Column = p.line, p.col
	return n
}

func str(p pos, s string) *yaml.Node {
	return p.set(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
}

func num(p pos, n int) *yaml.Node {
	return p.set(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)})
}

func boolean(p pos, b bool) *yaml.Node {
	return p.set(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)})
}

// quantity is a Kubernetes quantity: an integer when it is one, else a string.
func quantity(p pos, q Quantity) *yaml.Node {
	if _, err := strconv.Atoi(string(q)); err == nil {
		return p.set(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: string(q)})
	}
	return str(p, string(q))
}

func strs(p pos, ss []string) *yaml.Node {
	n := p.set(&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"})
	for _, s := range ss {
		n.Content = append(n.Content, str(p, s))
	}
	return n
}

func seq(p pos, items ...*yaml.Node) *yaml.Node {
	return p.set(&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items})
}

// field is one mapping entry; the key takes the value's position.
type field struct {
	key string
	val *yaml.Node
}

// mapping builds a mapping node from fields in order, skipping nil values.
func mapping(p pos, fields ...field) *yaml.Node {
	n := p.set(&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"})
	for _, f := range fields {
		n.Content = appendField(n.Content, f)
	}
	return n
}

func appendField(content []*yaml.Node, f field) []*yaml.Node {
	if f.val == nil {
		return content
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.key, Line: f.val.Line, Column: f.val.Column}
	return append(content, k, f.val)
}

// add appends fields to a mapping node.
func add(n *yaml.Node, fields ...field) {
	for _, f := range fields {
		n.Content = appendField(n.Content, f)
	}
}

// stringMap builds a mapping of strings with keys sorted.
func stringMap(p pos, m map[string]string) *yaml.Node {
	if len(m) == 0 {
		return nil
	}
	n := mapping(p)
	for _, k := range sortedKeys(m) {
		add(n, field{k, str(p, m[k])})
	}
	return n
}
