package manifest

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Locate returns the position of the most specific node on a field path that
// exists: the field itself, else its nearest existing parent, else the object.
// Paths look like `spec.template.spec.containers[0].securityContext` and
// `metadata.labels["app.kubernetes.io/name"]`.
func (o *Object) Locate(field string) Position {
	if o.index != nil && o.node.Load() == nil {
		return o.index.locate(o.File, o.Pos(), SplitPath(field))
	}
	n := o.view()
	best := o.Pos()
	for _, seg := range SplitPath(field) {
		var at *yaml.Node
		n, at = step(n, seg)
		if n == nil {
			break
		}
		if at.Line > 0 {
			best = Position{File: o.File, Line: at.Line, Column: at.Column}
		}
	}
	return best
}

// Lookup returns the node at a field path, or nil if it does not exist.
func (o *Object) Lookup(field string) *yaml.Node {
	n := o.view()
	for _, seg := range SplitPath(field) {
		if n, _ = step(n, seg); n == nil {
			return nil
		}
	}
	return n
}

// step descends one segment. It returns the child node and the node whose
// position names it: the key for a mapping entry (that is where a reader looks
// for a field), the item itself for a list element.
func step(n *yaml.Node, seg string) (child, at *yaml.Node) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil {
		return nil, nil
	}
	if n.Kind == yaml.SequenceNode {
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(n.Content) {
			return nil, nil
		}
		return n.Content[i], n.Content[i]
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == seg {
			if n.Content[i].Line == 0 {
				return n.Content[i+1], n.Content[i+1]
			}
			return n.Content[i+1], n.Content[i]
		}
	}
	return nil, nil
}

// SplitPath splits a field path into its segments: dots separate keys,
// [N] indexes a list, ["key"] quotes a key that contains dots.
func SplitPath(path string) []string {
	var segs []string
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return append(segs, path[i+1:])
			}
			inner := path[i+1 : i+end]
			if len(inner) >= 2 && (inner[0] == '"' || inner[0] == '\'') {
				if q := strings.IndexByte(path[i+2:], inner[0]); q >= 0 {
					inner = path[i+2 : i+2+q]
					end = q + 2 + strings.IndexByte(path[i+2+q:], ']')
				}
			}
			segs = append(segs, inner)
			i += end + 1
		default:
			j := i
			for j < len(path) && path[j] != '.' && path[j] != '[' {
				j++
			}
			segs = append(segs, path[i:j])
			i = j
		}
	}
	return segs
}
