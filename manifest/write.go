package manifest

import (
	"bytes"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Write encodes objects as one YAML stream, documents separated by "---",
// two-space indentation and compact sequences (kyaml's style). The same
// objects always give the same bytes.
func Write(w io.Writer, objs []*Object) error {
	for i, o := range objs {
		b, err := Encode(o.Node())
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// Encode encodes one node as a YAML document.
func Encode(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
