package policytest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A FileError is a broken test file: it names the file, line and column.
type FileError = manifest.Error

// reader decodes one test file strictly: every error names its line.
type reader struct {
	file string
}

func (r *reader) at(n *yaml.Node) manifest.Position {
	return manifest.Position{File: r.file, Line: n.Line, Column: n.Column}
}

func (r *reader) errorf(n *yaml.Node, format string, args ...any) error {
	return &FileError{Pos: r.at(n), Msg: fmt.Sprintf(format, args...)}
}

// document reads the one mapping a test file holds.
func (r *reader) document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FileError{Pos: manifest.Position{File: r.file, Line: 1, Column: 1}, Msg: "empty test file"}
		}
		return nil, &FileError{Pos: manifest.Position{File: r.file, Line: 1, Column: 1}, Msg: "invalid YAML: " + err.Error()}
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil && len(second.Content) > 0 && second.Content[0].ShortTag() != "!!null" {
		return nil, r.errorf(second.Content[0], "a second YAML document: a test file holds one test; put each test in its own file")
	}
	if len(doc.Content) == 0 {
		return nil, &FileError{Pos: manifest.Position{File: r.file, Line: 1, Column: 1}, Msg: "empty test file"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, r.errorf(root, "a test file is a mapping")
	}
	return root, nil
}

// fields checks that n is a mapping whose keys are all known and none is
// written twice, and returns the values by key.
func (r *reader) fields(n *yaml.Node, what string, known ...string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, r.errorf(n, "%s must be a mapping (keys: %s)", what, strings.Join(known, ", "))
	}
	out := map[string]*yaml.Node{}
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if first, dup := keys[k.Value]; dup {
			return nil, r.errorf(k, "duplicate key %q (first at line %d); keep one", k.Value, first.Line)
		}
		keys[k.Value] = k
		if !contains(known, k.Value) {
			return nil, r.errorf(k, "unknown key %q in %s (known: %s)", k.Value, what, strings.Join(known, ", "))
		}
		out[k.Value] = v
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// keyNode returns the key node of field in mapping n (for positions).
func keyNode(n *yaml.Node, field string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == field {
			return n.Content[i]
		}
	}
	return n
}

func (r *reader) str(n *yaml.Node, what string) (string, error) {
	if n == nil {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", r.errorf(n, "%s must be a string", what)
	}
	return n.Value, nil
}

func (r *reader) boolean(n *yaml.Node, what string) (bool, error) {
	if n == nil {
		return false, nil
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, r.errorf(n, "%s must be true or false", what)
	}
	return strconv.ParseBool(n.Value)
}

func (r *reader) strings(n *yaml.Node, what string) ([]string, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, r.errorf(n, "%s must be a list of strings", what)
	}
	out := []string{}
	for _, c := range n.Content {
		s, err := r.str(c, what+" entries")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (r *reader) stringMap(n *yaml.Node, what string) (map[string]string, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, r.errorf(n, "%s must be a mapping of strings", what)
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := out[k.Value]; dup {
			return nil, r.errorf(k, "duplicate key %q in %s", k.Value, what)
		}
		s, err := r.str(v, what+" values")
		if err != nil {
			return nil, err
		}
		out[k.Value] = s
	}
	return out, nil
}

// oneOf checks that a string is one of the allowed values.
func (r *reader) oneOf(n *yaml.Node, what string, allowed ...string) (string, error) {
	s, err := r.str(n, what)
	if err != nil || n == nil {
		return s, err
	}
	if !contains(allowed, s) {
		sorted := append([]string(nil), allowed...)
		sort.Strings(sorted)
		return "", r.errorf(n, "%s %q: use one of %s", what, s, strings.Join(sorted, ", "))
	}
	return s, nil
}
