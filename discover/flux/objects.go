package flux

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// object is one object of the input as the controllers would read it:
// its content and where it is written.
type object struct {
	content map[string]any
	pos     manifest.Position
	// cluster is what the object is deployed into with others
	// (manifest.ClusterOf): a tree rooted at it deploys there.
	cluster string
}

func (o *object) apiVersion() string { return str(o.content, "apiVersion") }
func (o *object) kind() string       { return str(o.content, "kind") }
func (o *object) name() string       { return str(meta(o.content), "name") }
func (o *object) namespace() string  { return str(meta(o.content), "namespace") }

// group returns the object's API group.
func (o *object) group() string {
	g, _, _ := strings.Cut(o.apiVersion(), "/")
	if !strings.Contains(o.apiVersion(), "/") {
		return ""
	}
	return g
}

func meta(m map[string]any) map[string]any {
	md, _ := m["metadata"].(map[string]any)
	return md
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// readFile returns the objects of a manifest file (the items of a List
// too), skipping documents that are not objects; a file that cannot be
// read or parsed gives none (lint reports it).
func readFile(path string) []*object {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return readObjects(path, data)
}

// readObjects returns the objects of data, read from path.
func readObjects(path string, data []byte) []*object {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*object
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			return out
		}
		if len(doc.Content) == 0 {
			continue
		}
		n := doc.Content[0]
		var m map[string]any
		if n.Kind != yaml.MappingNode || n.Decode(&m) != nil {
			continue
		}
		o := &object{content: m, pos: manifest.Position{File: path, Line: n.Line, Column: n.Column}, cluster: filepath.Dir(path)}
		if strings.HasSuffix(o.kind(), "List") {
			items, _ := m["items"].([]any)
			for _, it := range items {
				if im, ok := it.(map[string]any); ok {
					if x := (&object{content: im, pos: o.pos, cluster: o.cluster}); x.apiVersion() != "" && x.kind() != "" {
						out = append(out, x)
					}
				}
			}
			continue
		}
		if o.apiVersion() != "" && o.kind() != "" {
			out = append(out, o)
		}
	}
	return out
}

// fromManifest returns a rendered object as the controllers read it.
func fromManifest(o *manifest.Object) *object {
	c, err := o.Content()
	if err != nil || c == nil {
		return nil
	}
	return &object{content: c, pos: o.Pos(), cluster: manifest.ClusterOf(o)}
}
