package fix

import (
	"strconv"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// isNull reports whether n is absent or an explicit null.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// set sets key in mapping m to v, appending the key if it is new.
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, str(key), v)
}

// remove deletes key from mapping m.
func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			return
		}
	}
}

// mapping returns the mapping at key in m, creating it (or replacing a null) when absent.
// It returns nil when the key holds something other than a mapping.
func mapping(m *yaml.Node, key string) *yaml.Node {
	v := yamlnode.Value(m, key)
	if isNull(v) {
		v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		set(m, key, v)
	}
	if v.Kind != yaml.MappingNode {
		return nil
	}
	return v
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func boolean(b bool) *yaml.Node {
	v := "false"
	if b {
		v = "true"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: v}
}

// isBool reports whether n is the boolean b.
func isBool(n *yaml.Node, b bool) bool {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		return false
	}
	return v == b
}

// setScalar changes a scalar's value in place (keeping its position and
// quoting), or sets key to a new scalar.
func setScalar(m *yaml.Node, key string, v *yaml.Node) {
	if old := yamlnode.Value(m, key); old != nil && old.Kind == yaml.ScalarNode {
		old.Value, old.Tag = v.Value, v.Tag
		if v.Tag == "!!bool" {
			old.Style &^= yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle
		}
		return
	}
	set(m, key, v)
}

func integer(n int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(n, 10)}
}
