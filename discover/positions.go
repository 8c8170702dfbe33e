package discover

import (
	"github.com/kilnhq/kiln/internal/yamlnode"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// clearPositions sets every node's position to unknown (0), but for the
// placed subtrees: Locate then places a field at its nearest parent that
// has one.
func clearPositions(n *yaml.Node, keep placed) {
	if n == nil || keep[n] {
		return
	}
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		clearPositions(c, keep)
	}
}

// copyPositions gives each node of rendered the position of the node at the
// same path in src: mapping keys by name, list items by their name field
// (containers, ports, volumes) else by index. Nodes with no counterpart
// (added by a patch or a transformer) keep position 0, and placed
// subtrees their own. A schema placeholder in src stands for the schema it
// replaced (sources.prepare).
func (s *sources) copyPositions(rendered, src *yaml.Node, keep placed) {
	for src != nil && src.Kind == yaml.AliasNode {
		src = src.Alias
	}
	if sc := s.schemaOf(src); sc != nil {
		src = sc.tree
	}
	if rendered == nil || src == nil || keep[rendered] {
		return
	}
	rendered.Line, rendered.Column = src.Line, src.Column
	switch {
	case rendered.Kind == yaml.MappingNode && src.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(rendered.Content); i += 2 {
			k := rendered.Content[i]
			for j := 0; j+1 < len(src.Content); j += 2 {
				if src.Content[j].Value == k.Value {
					k.Line, k.Column = src.Content[j].Line, src.Content[j].Column
					s.copyPositions(rendered.Content[i+1], src.Content[j+1], keep)
					break
				}
			}
		}
	case rendered.Kind == yaml.SequenceNode && src.Kind == yaml.SequenceNode:
		for i, it := range rendered.Content {
			if name := scalarAt(it, "name"); name != "" {
				for _, item := range src.Content {
					if scalarAt(item, "name") == name {
						s.copyPositions(it, item, keep)
						break
					}
				}
				continue
			}
			if i < len(src.Content) {
				s.copyPositions(it, src.Content[i], keep)
			}
		}
	}
}

// fillPositions gives every node of a rendered tree whose position is
// unknown (0: a line of a chart's output that cannot be traced to its
// template, a field a kustomize patch added) the position of its nearest
// parent that has one, so that nothing read from the tree, a finding or a
// reading note, points at line 0. The root must have a position; placed
// subtrees have theirs.
func fillPositions(n *yaml.Node, keep placed) {
	if keep[n] {
		return
	}
	for i, c := range n.Content {
		if c.Line == 0 {
			from := n
			if n.Kind == yaml.MappingNode && i%2 == 1 {
				from = n.Content[i-1] // a value is where its key is
			}
			c.Line, c.Column = from.Line, from.Column
		}
		fillPositions(c, keep)
	}
}

func scalarAt(m *yaml.Node, key string) string {
	if n := yamlnode.Value(m, key); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}
