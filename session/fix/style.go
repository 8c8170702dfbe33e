package fix

import (
	"bytes"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// style is how a document indents: the width of one mapping level and
// whether a block sequence under a key is indented ("key:\n  - a") or not
// ("key:\n- a"). New lines are encoded in the document's own style.
type style struct {
	indent  int
	compact bool
}

// detectStyle takes the most common indentation of a document's block
// collections; without any, two spaces and indented sequences.
func detectStyle(root *yaml.Node) style {
	widths := map[int]int{}
	var compact, indented int
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Style&yaml.FlowStyle != 0 || v.Line == k.Line {
					continue
				}
				switch v.Kind {
				case yaml.MappingNode:
					if d := v.Column - k.Column; d > 0 {
						widths[d]++
					}
				case yaml.SequenceNode:
					if v.Column == k.Column {
						compact++
					} else {
						indented++
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	st := style{indent: 2, compact: compact > indented}
	best := 0
	for w, n := range widths {
		if n > best || (n == best && w < st.indent) {
			st.indent, best = w, n
		}
	}
	return st
}

// encode encodes a node as a block document in the style.
func (st style) encode(n *yaml.Node) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(st.indent)
	if st.compact {
		enc.CompactSeqIndent()
	} else {
		enc.DefaultSeqIndent()
	}
	if err := enc.Encode(spellNulls(n, false)); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// encodeEntry encodes "key: value" lines indented by ind spaces.
func (st style) encodeEntry(k, v *yaml.Node, ind int) (string, error) {
	text, err := st.encode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, v}})
	if err != nil {
		return "", err
	}
	return indentLines(text, ind), nil
}

// encodeItem encodes "- item" lines indented by ind spaces.
func (st style) encodeItem(n *yaml.Node, ind int) (string, error) {
	text, err := st.encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{n}})
	if err != nil {
		return "", err
	}
	return indentLines(text, ind), nil
}

// encodeFlow encodes a scalar or a flow collection on one line.
func encodeFlow(n *yaml.Node) (string, error) {
	text, err := style{indent: 2}.encode(n)
	if err != nil {
		return "", err
	}
	text = strings.TrimSuffix(text, "\n")
	if strings.Contains(text, "\n") {
		return "", errPatch
	}
	return text, nil
}

func indentLines(text string, ind int) string {
	if ind == 0 {
		return text
	}
	pad := strings.Repeat(" ", ind)
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(pad)
		}
		b.WriteString(l)
	}
	return b.String()
}

// spellNulls returns a copy of n in which empty nulls inside flow
// collections read "null": yaml.v3 would encode "{a: }" as "{a: ”}", a string.
func spellNulls(n *yaml.Node, flow bool) *yaml.Node {
	cp := *n
	flow = flow || n.Style&yaml.FlowStyle != 0
	if flow && n.Kind == yaml.ScalarNode && n.Value == "" && n.ShortTag() == "!!null" && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 {
		cp.Value = "null"
	}
	if len(n.Content) > 0 {
		cp.Content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			cp.Content[i] = spellNulls(c, flow)
		}
	}
	return &cp
}
