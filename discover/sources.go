package discover

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
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
	schemas []*schema
	// edited are files kustomize reads from memory rather than disk
	// (Options.Edited), by absolute path.
	edited map[string][]byte
}

// schema is a CRD schema a placeholder stands for: its tree as written,
// and where it is written, to read it again.
type schema struct {
	path string // the file (absolute)
	tree *yaml.Node
	read func() ([]byte, error) // the file, as kustomize read it
	doc  int                    // the document in decodeAll(data)
	slot int                    // the slot in schemaSlots of that document
	sum  func() [32]byte
}

// part is the schema as a part of a rendered object that the object may
// let go of and read again from the file. The file is read again rather
// than kept (the large CRD files of a tree are megabytes, held for a
// finding that is rare); a file changed since has lost the part (nil).
func (sc *schema) part(slot []*yaml.Node) manifest.Detachable {
	return schemaPart(slot, sc.read, sc.doc, sc.slot, sc.sum())
}

// schemaPart is the part in slot of a rendered object: the schema at slot
// i of document doc of the file read reads, whose TreeSum is sum.
func schemaPart(slot []*yaml.Node, read func() ([]byte, error), doc, i int, sum [32]byte) manifest.Detachable {
	return manifest.Detachable{Slot: slot, Sum: sum, Load: func() *yaml.Node {
		data, err := read()
		if err != nil {
			return nil
		}
		docs := decodeAll(data)
		if doc < len(docs) {
			if slots := schemaSlots(docs[doc].Content[0]); i < len(slots) && manifest.TreeSum(slots[i][1]) == sum {
				return slots[i][1]
			}
		}
		return nil
	}}
}

// reader returns how to read the file at path again: from memory if it
// is an edited file, else from disk.
func (s *sources) reader(path string) func() ([]byte, error) {
	if data, ok := s.edited[path]; ok {
		return func() ([]byte, error) { return data, nil }
	}
	return func() ([]byte, error) { return os.ReadFile(path) }
}

// preparedFile is one resource file as kustomize reads it: with origin
// annotations (made when first asked for, from the bytes kustomize read
// then, if the file has schema placeholders, which most builds read
// instead: a large CRD file's bytes are not kept for it), and with schema
// placeholders (nil when it has none to replace). Both nil: the file is
// read as written. objects are the file's objects as written, with
// placeholders for the schemas: the rendered objects take their positions
// from them (placeholders stand for their schemas).
type preparedFile struct {
	annotated func(data []byte) []byte
	stubbed   []byte
	objects   []*yaml.Node
	// schemas are the file's schemas that placeholders stand for.
	schemas []*schema
}

// newSources returns the sources of one discovery; edited are the files
// read from memory (Options.Edited, by absolute path).
func newSources(edited map[string][]byte) *sources { return &sources{edited: edited} }

// resource returns what kustomize reads for the resource file at path:
// data with origin annotations, and with schema placeholders when stub is
// set. A file that is not YAML objects is read as written.
func (s *sources) resource(path string, data []byte, stub bool) []byte {
	f := s.files.get(path, func() preparedFile { return s.prepare(path, data) })
	if stub && f.stubbed != nil {
		return f.stubbed
	}
	if f.annotated != nil {
		if a := f.annotated(data); a != nil {
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
	objects := allItems(docs)
	if len(data) < stubMinSize || !bytes.Contains(data, []byte("CustomResourceDefinition")) {
		return preparedFile{annotated: constant(encodeAll(docs)), objects: objects}
	}
	var mine []*schema
	read := s.reader(path)
	for di, d := range docs {
		for si, slot := range schemaSlots(d.Content[0]) {
			tree := slot[1]
			sc := &schema{path: path, tree: tree, read: read, doc: di, slot: si, sum: sync.OnceValue(func() [32]byte { return manifest.TreeSum(tree) })}
			s.mu.Lock()
			id := len(s.schemas)
			s.schemas = append(s.schemas, sc)
			s.mu.Unlock()
			slot[1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: stubKey},
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: strconv.Itoa(id)},
			}}
			mine = append(mine, sc)
		}
	}
	if len(mine) == 0 {
		return preparedFile{annotated: constant(encodeAll(docs)), objects: objects}
	}
	// The file as written, annotated, is read only by a build that falls
	// back from placeholders: parse what that build read then.
	var once sync.Once
	var annotated []byte
	return preparedFile{stubbed: encodeAll(docs), objects: objects, schemas: mine, annotated: func(data []byte) []byte {
		once.Do(func() {
			if docs := decodeAll(data); docs != nil {
				annotateAll(docs, path)
				annotated = encodeAll(docs)
			}
		})
		return annotated
	}}
}

// constant returns a function that returns data.
func constant(data []byte) func([]byte) []byte {
	return func([]byte) []byte { return data }
}

// objects returns the objects of a resource file prepared for the builds
// (its path as in its origin annotations), nil for another file.
func (s *sources) objects(path string) []*yaml.Node {
	return s.files.get(path, func() preparedFile { return preparedFile{} }).objects
}

// schemaOf returns the schema a placeholder node stands for, nil if n is
// no placeholder.
func (s *sources) schemaOf(n *yaml.Node) *schema {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) != 2 || n.Content[0].Value != stubKey {
		return nil
	}
	id, err := strconv.Atoi(n.Content[1].Value)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 0 || id >= len(s.schemas) {
		return nil
	}
	return s.schemas[id]
}

// annotateAll annotates each object of docs with where it is in path.
func annotateAll(docs []*yaml.Node, path string) {
	for _, o := range allItems(docs) {
		annotate(o, strconv.Itoa(o.Line)+" "+path)
	}
}

// allItems returns the objects of docs (listItems of each).
func allItems(docs []*yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for _, d := range docs {
		out = append(out, listItems(d.Content[0])...)
	}
	return out
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

// restore puts the written schemas back into a rendered CRD, each the
// schema as written itself, shared by every build that renders it (the
// overlays of argo-workflows render the same CRDs eight times), and
// returns them, as placed subtrees (they carry their positions already,
// and the rendered tree's positioning must leave them alone: nothing edits
// a rendered tree once it is an object) and as parts the object may let go
// of. It fails if a build changed a placeholder.
func (s *sources) restore(doc *yaml.Node) (placed, []manifest.Detachable, []partRef, error) {
	var out placed
	var parts []manifest.Detachable
	var refs []partRef
	for at, slot := range schemaSlots(doc) {
		v := slot[1]
		if scalarAt(v, stubKey) == "" {
			continue
		}
		sc := s.schemaOf(v)
		if sc == nil {
			return nil, nil, nil, errStubTouched
		}
		slot[1] = sc.tree
		if out == nil {
			out = placed{}
		}
		out[sc.tree] = true
		p := sc.part(slot)
		parts = append(parts, p)
		refs = append(refs, partRef{at: at, path: sc.path, doc: sc.doc, slot: sc.slot, sum: p.Sum})
	}
	return out, parts, refs, nil
}

// schemaAt returns the schema at slot i of document doc of the resource
// file at path, as written, prepared once for all the builds of the
// discovery (a build restored from the render cache shares it with those
// that render); nil if the file has no such schema now.
func (s *sources) schemaAt(path string, doc, i int) *schema {
	f := s.files.get(path, func() preparedFile {
		data, err := s.reader(path)()
		if err != nil {
			return preparedFile{}
		}
		return s.prepare(path, data)
	})
	for _, sc := range f.schemas {
		if sc.doc == doc && sc.slot == i {
			return sc
		}
	}
	return nil
}

// partRef says where a rendered object's detachable schema is written,
// for the render cache: at is its place among the object's schemaSlots.
type partRef struct {
	at        int
	path      string
	doc, slot int
	sum       [32]byte
}

// placed are the subtrees of a rendered tree that already carry their
// positions (restored schemas): positioning neither reads nor changes them.
type placed map[*yaml.Node]bool
