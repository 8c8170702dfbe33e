package discover

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kiln does not ask kustomize for its origin annotations: with them on,
// every transformer of every level rewrites a list of transformations on
// every resource, which made argo-cd's builds four times slower. Instead,
// while kustomize reads a file a kustomization lists as a resource, each
// object in it carries one annotation saying where it is written (its
// file and the line its document starts on); the annotation is taken off
// each rendered object and its positions are copied from that document.
//
// A tree often includes the same large CRDs from every overlay (argo-cd's
// 1.8 MB of them from seven installs), and kustomize parses and copies each
// schema again in every build. While kustomize builds, a CRD in a large
// file therefore carries a small placeholder instead of each OpenAPI
// schema, and the schema as written is put back into the rendered CRD. A
// build whose transformers touched a placeholder (a patch into a schema)
// or that failed is built again without placeholders, so the result is
// always kustomize's own.

// originKey is the annotation naming an object's source while kustomize builds.
const originKey = "internal.kiln.dev/origin"

// stubMinSize is the file size from which CRD schemas are replaced.
const stubMinSize = 64 << 10

// stubKey is a placeholder's only field; its value indexes sources.schemas.
const stubKey = "x-kiln-schema-placeholder"

// errStubTouched reports a placeholder a transformer changed.
var errStubTouched = errors.New("a transformer changed a CRD schema placeholder")

// sources prepares the resource files kustomize reads, once per file for
// all the builds of one discovery.
type sources struct {
	files   onceMap[preparedFile]
	mu      sync.Mutex // guards schemas
	schemas []*yaml.Node
}

// preparedFile is one resource file as kustomize reads it: with origin
// annotations (made when first asked for if the file has schema
// placeholders, which most builds read instead), and with schema
// placeholders (nil when it has none to replace). Both nil: the file is
// read as written.
type preparedFile struct {
	annotated func() []byte
	stubbed   []byte
}

func newSources() *sources { return &sources{} }

// resource returns what kustomize reads for the resource file at path:
// data with origin annotations, and with schema placeholders when stub is
// set. A file that is not YAML objects is read as written.
func (s *sources) resource(path string, data []byte, stub bool) []byte {
	f := s.files.get(path, func() preparedFile { return s.prepare(path, data) })
	if stub && f.stubbed != nil {
		return f.stubbed
	}
	if f.annotated != nil {
		if a := f.annotated(); a != nil {
			return a
		}
	}
	return data
}

// prepare returns the file with each object annotated, and the same with
// its CRDs' schemas replaced.
func (s *sources) prepare(path string, data []byte) preparedFile {
	docs := decodeAll(data)
	if docs == nil {
		return preparedFile{}
	}
	annotateAll(docs, path)
	if len(data) < stubMinSize || !bytes.Contains(data, []byte("CustomResourceDefinition")) {
		annotated := encodeAll(docs)
		return preparedFile{annotated: func() []byte { return annotated }}
	}
	replaced := false
	for _, d := range docs {
		for _, slot := range schemaSlots(d.Content[0]) {
			s.mu.Lock()
			id := len(s.schemas)
			s.schemas = append(s.schemas, slot[1])
			s.mu.Unlock()
			slot[1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: stubKey},
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: strconv.Itoa(id)},
			}}
			replaced = true
		}
	}
	if !replaced {
		annotated := encodeAll(docs)
		return preparedFile{annotated: func() []byte { return annotated }}
	}
	// The file as written, annotated, is read only by a build that falls
	// back from placeholders: parse it again then.
	return preparedFile{stubbed: encodeAll(docs), annotated: sync.OnceValue(func() []byte {
		docs := decodeAll(data)
		annotateAll(docs, path)
		return encodeAll(docs)
	})}
}

// annotateAll annotates each object of docs with where it is in path.
func annotateAll(docs []*yaml.Node, path string) {
	for _, d := range docs {
		for _, o := range listItems(d.Content[0]) {
			annotate(o, strconv.Itoa(o.Line)+" "+path)
		}
	}
}

// decodeAll returns a file's documents, or nil if one cannot be read or
// none is an object.
func decodeAll(data []byte) []*yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	objects := false
	for {
		doc := &yaml.Node{}
		err := dec.Decode(doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil
		}
		if len(doc.Content) == 0 {
			continue
		}
		objects = objects || len(listItems(doc.Content[0])) > 0
		docs = append(docs, doc)
	}
	if !objects {
		return nil
	}
	return docs
}

func encodeAll(docs []*yaml.Node) []byte {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	for _, d := range docs {
		if enc.Encode(d) != nil {
			return nil
		}
	}
	if enc.Close() != nil {
		return nil
	}
	return out.Bytes()
}

// listItems returns the objects a document holds: itself, or the items of
// a List (which kustomize reads as its items).
func listItems(doc *yaml.Node) []*yaml.Node {
	if !isObject(doc) {
		return nil
	}
	if items := yamlnode.Value(doc, "items"); strings.HasSuffix(scalarAt(doc, "kind"), "List") && items != nil {
		if items.Kind != yaml.SequenceNode {
			return nil
		}
		var out []*yaml.Node
		for _, it := range items.Content {
			if isObject(it) {
				out = append(out, it)
			}
		}
		return out
	}
	return []*yaml.Node{doc}
}

func isObject(n *yaml.Node) bool {
	return n.Kind == yaml.MappingNode && scalarAt(n, "apiVersion") != "" && scalarAt(n, "kind") != "" &&
		!strings.HasPrefix(scalarAt(n, "apiVersion"), "kustomize.config.k8s.io/")
}

// annotate sets the origin annotation on an object; value is "LINE PATH".
// An object without metadata gets a mapping marked so that taking the
// annotation off removes it again.
func annotate(o *yaml.Node, value string) {
	meta := yamlnode.Value(o, "metadata")
	if meta == nil {
		meta = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		o.Content = append(o.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "metadata"}, meta)
		value += "\x00metadata"
	}
	if meta.Kind != yaml.MappingNode {
		return
	}
	annos := yamlnode.Value(meta, "annotations")
	if annos == nil {
		annos = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "annotations"}, annos)
	}
	if annos.Kind != yaml.MappingNode {
		return
	}
	annos.Content = append(annos.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: originKey},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: value})
}

// takeOrigin removes the origin annotation from a rendered object and
// returns the file and line it names ("" when it has none).
func takeOrigin(o *yaml.Node) (file string, line int) {
	meta := yamlnode.Value(o, "metadata")
	annos := yamlnode.Value(meta, "annotations")
	if annos == nil || annos.Kind != yaml.MappingNode {
		return "", 0
	}
	for i := 0; i+1 < len(annos.Content); i += 2 {
		if annos.Content[i].Value != originKey {
			continue
		}
		value := annos.Content[i+1].Value
		annos.Content = append(annos.Content[:i:i], annos.Content[i+2:]...)
		value, addedMeta := strings.CutSuffix(value, "\x00metadata")
		if len(annos.Content) == 0 {
			// kustomize drops an empty mapping on most paths; the
			// server reads none and {} alike.
			removeKey(meta, "annotations")
		}
		if addedMeta && len(meta.Content) == 0 {
			removeKey(o, "metadata")
		}
		l, path, ok := strings.Cut(value, " ")
		n, err := strconv.Atoi(l)
		if !ok || err != nil {
			return "", 0
		}
		return path, n
	}
	return "", 0
}

func removeKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			return
		}
	}
}

// schemaSlots returns where a CRD document holds its schemas (each
// spec.versions[].schema and the v1beta1 spec.validation): each slot is
// the openAPIV3Schema key and value within their mapping, so that setting
// slot[1] replaces the schema.
func schemaSlots(doc *yaml.Node) [][]*yaml.Node {
	if scalarAt(doc, "kind") != "CustomResourceDefinition" {
		return nil
	}
	spec := yamlnode.Value(doc, "spec")
	var holders []*yaml.Node
	if v := yamlnode.Value(spec, "validation"); v != nil {
		holders = append(holders, v)
	}
	if vs := yamlnode.Value(spec, "versions"); vs != nil && vs.Kind == yaml.SequenceNode {
		for _, v := range vs.Content {
			if sc := yamlnode.Value(v, "schema"); sc != nil {
				holders = append(holders, sc)
			}
		}
	}
	var slots [][]*yaml.Node
	for _, h := range holders {
		if h.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(h.Content); i += 2 {
			if h.Content[i].Value == "openAPIV3Schema" && h.Content[i+1].Kind == yaml.MappingNode {
				slots = append(slots, h.Content[i:i+2])
			}
		}
	}
	return slots
}

// restore puts the written schemas back into a rendered CRD, each a copy
// (the build goes on to set the rendered tree's positions), and returns
// them with the schemas they copy, for share. It fails if a build changed a
// placeholder.
func (s *sources) restore(doc *yaml.Node) ([]restored, error) {
	var out []restored
	for _, slot := range schemaSlots(doc) {
		v := slot[1]
		id := scalarAt(v, stubKey)
		if id == "" {
			continue
		}
		n, err := strconv.Atoi(id)
		if err != nil || len(v.Content) != 2 {
			return nil, errStubTouched
		}
		s.mu.Lock()
		var orig *yaml.Node
		if n >= 0 && n < len(s.schemas) {
			orig = s.schemas[n]
		}
		s.mu.Unlock()
		if orig == nil {
			return nil, errStubTouched
		}
		slot[1] = deepCopy(orig)
		out = append(out, restored{slot: slot, orig: orig})
	}
	return out, nil
}

// restored is a schema restore put back: slot[1] is the copy of orig.
type restored struct {
	slot []*yaml.Node
	orig *yaml.Node
}

// share replaces each restored copy that came out of the build's
// positioning identical to the schema as written (every field, position
// included) with that schema, so that the overlays rendering one large CRD
// hold its schema once, not once each (argo-workflows: 8 builds of the
// same CRDs). Nothing edits a rendered tree once it is an object.
func share(rs []restored) {
	for _, r := range rs {
		if sameTree(r.slot[1], r.orig) {
			r.slot[1] = r.orig
		}
	}
}

// sameTree reports whether two node trees are equal in every field.
func sameTree(a, b *yaml.Node) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value ||
		a.Anchor != b.Anchor || a.Alias != b.Alias || a.HeadComment != b.HeadComment || a.LineComment != b.LineComment ||
		a.FootComment != b.FootComment || a.Line != b.Line || a.Column != b.Column || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameTree(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// deepCopy copies a node tree, positions included, resolving aliases.
func deepCopy(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil {
		return nil
	}
	c := *n
	c.Anchor = ""
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = deepCopy(k)
		}
	}
	return &c
}
