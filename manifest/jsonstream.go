package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// isJSONStream reports whether data is two or more JSON objects one after
// the other ({...}{...}, or one per line), which kubectl reads as a stream
// of objects. A single JSON document, and JSON documents between "---"
// markers, stay with the YAML reader.
func isJSONStream(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var first json.RawMessage
	if dec.Decode(&first) != nil {
		return false
	}
	// Another object right after it (not "---" and more YAML documents).
	rest := bytes.TrimLeft(trimmed[dec.InputOffset():], " \t\r\n")
	return len(rest) > 0 && rest[0] == '{'
}

// jsonValues returns a reader of the JSON values in data, each as a YAML
// document node whose positions are those in data.
func jsonValues(file string, data []byte) func(*yaml.Node) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	// at is lineCol(data, off), counted on from the previous value.
	prevOff, prevLine, prevCol := 0, 1, 1
	at := func(off int) (int, int) {
		if off < prevOff {
			prevOff, prevLine, prevCol = 0, 1, 1
		}
		l, c := lineCol(data[prevOff:], off-prevOff)
		if l == 1 {
			c += prevCol - 1
		}
		prevOff, prevLine, prevCol = off, prevLine+l-1, c
		return prevLine, prevCol
	}
	return func(n *yaml.Node) error {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return io.EOF
		}
		end := int(dec.InputOffset())
		if err != nil {
			var syn *json.SyntaxError
			off, msg := end, err.Error()
			if errors.As(err, &syn) {
				off = max(int(syn.Offset)-1, 0) // Offset is just past the bad byte
			} else if errors.Is(err, io.ErrUnexpectedEOF) {
				// Where the unfinished value starts.
				off += len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n"))
				msg = "the value that starts here does not end: a closing } or ] is missing"
			}
			line, col := at(min(off, len(data)-1))
			return &Error{Pos: Position{File: file, Line: line, Column: col}, Msg: "invalid JSON: " + msg}
		}
		start := end - len(raw)
		line, col := at(start)
		if err := yaml.Unmarshal(raw, n); err != nil {
			return &Error{Pos: Position{File: file, Line: line, Column: col}, Msg: "invalid JSON: " + err.Error()}
		}
		shift(n, line-1, col-1)
		return nil
	}
}

// shift moves a node tree parsed on its own to where it is in the file: every
// line down by lines, and the columns of what is on its first line by cols.
func shift(n *yaml.Node, lines, cols int) {
	if n.Line == 1 {
		n.Column += cols
	}
	if n.Line > 0 {
		n.Line += lines
	}
	for _, c := range n.Content {
		shift(c, lines, cols)
	}
}
