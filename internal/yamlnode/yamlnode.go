// Package yamlnode reads YAML nodes as kiln's packages that keep the
// user's YAML (positions, comments) need them.
package yamlnode

import "sigs.k8s.io/kustomize/kyaml/yaml"

// Value returns the value of key in mapping m, or nil (also when m is nil
// or not a mapping).
func Value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Scalar returns a scalar's value, or "" for nil, null and other kinds.
func Scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}
