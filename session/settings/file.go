package settings

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/internal/editdist"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FileName is the config file kiln looks for.
const FileName = ".kiln.yaml"

// nested are the .kiln.yaml keys that hold settings of their own.
var nested = map[string]bool{"psa": true, "helm": true, "flux": true, "argocd": true}

// ReadFile returns the assignments of a .kiln.yaml. Invalid YAML, a second
// document, a duplicate key, an unknown key or a value of the wrong shape is
// an error at its line.
func ReadFile(path string, data []byte) ([]Assignment, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, &manifest.Error{Pos: manifest.Position{File: path, Line: 1, Column: 1}, Msg: "invalid YAML in config: " + err.Error()}
	}
	at := func(n *yaml.Node) manifest.Position {
		return manifest.Position{File: path, Line: n.Line, Column: n.Column}
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil && len(second.Content) > 0 && second.Content[0].ShortTag() != "!!null" {
		return nil, &manifest.Error{Pos: at(second.Content[0]), Msg: "a second YAML document in the config: " + FileName + " holds one mapping; remove the --- and merge the settings"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if err := noDuplicateKeys(root, at); err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, &manifest.Error{Pos: at(root), Msg: "config must be a mapping (keys: " + fileKeys() + ")"}
	}
	var out []Assignment
	var errs []error // every mistake, not only the first
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if nested[k.Value] {
			if v.Kind != yaml.MappingNode {
				errs = append(errs, &manifest.Error{Pos: at(v), Msg: k.Value + " must be a mapping (keys: " + subKeys(k.Value) + ")"})
				continue
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				key := k.Value + "." + v.Content[j].Value
				if e := lookup(key); e == nil || !e.inFile {
					errs = append(errs, &manifest.Error{Pos: at(v.Content[j]), Msg: "unknown key " + key + didYouMean(v.Content[j].Value, subKeys(k.Value)) + " (known: " + subKeys(k.Value) + ")"})
					continue
				}
				out = append(out, Assignment{Key: key, Value: v.Content[j+1], From: path, Pos: at(v.Content[j+1])})
			}
			continue
		}
		if e := lookup(k.Value); e == nil || !e.inFile {
			errs = append(errs, &manifest.Error{Pos: at(k), Msg: "unknown config key \"" + k.Value + "\"" + didYouMean(k.Value, fileKeys()) + " (known: " + fileKeys() + ")"})
			continue
		}
		out = append(out, Assignment{Key: k.Value, Value: v, From: path, Pos: at(v)})
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	return out, nil
}

// didYouMean is "; did you mean \"k\"?" for the key of known (a
// comma-separated list) nearest to key in spelling, "" when none is close.
func didYouMean(key, known string) string {
	best, bestD := "", len(key)/3+2
	for _, k := range strings.Split(known, ", ") {
		if d := editdist.Distance(key, k); d < bestD && k != "" {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean \"" + best + "\"?"
}

// fileKeys are the top-level keys of .kiln.yaml.
func fileKeys() string {
	seen := map[string]bool{}
	return keys(func(e *entry) string {
		if !e.inFile {
			return ""
		}
		top, _, _ := strings.Cut(e.key, ".")
		if seen[top] {
			return ""
		}
		seen[top] = true
		return top
	})
}

func subKeys(top string) string {
	return keys(func(e *entry) string {
		if rest, ok := strings.CutPrefix(e.key, top+"."); ok && e.inFile {
			return rest
		}
		return ""
	})
}

// noDuplicateKeys reports the first mapping key written twice, anywhere in n.
func noDuplicateKeys(n *yaml.Node, at func(*yaml.Node) manifest.Position) error {
	if n.Kind == yaml.MappingNode {
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if first, dup := seen[k.Value]; dup {
				return &manifest.Error{Pos: at(k), Msg: "duplicate key \"" + k.Value + "\" (first at line " + strconv.Itoa(first.Line) + "); keep one"}
			}
			seen[k.Value] = k
		}
	}
	for _, c := range n.Content {
		if err := noDuplicateKeys(c, at); err != nil {
			return err
		}
	}
	return nil
}

// loadFile reads the config file at path into s (first, under what the
// other sources gave). A missing file is an error only when named.
func (s *Settings) loadFile(path string, named bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if !named && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return &manifest.Error{Pos: manifest.Position{File: path}, Msg: "cannot read config: " + err.Error()}
	}
	// Every mistake of the file at once: the keys it does not know and the
	// values of the keys it knows.
	as, err := ReadFile(path, data)
	errs := []error{err}
	for _, a := range as {
		errs = append(errs, s.apply(a))
	}
	s.File = path
	return errors.Join(errs...)
}
