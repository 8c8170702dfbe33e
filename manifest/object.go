// Package manifest reads Kubernetes objects from YAML and JSON streams, keeping
// each object's source file, document index and the line and column of every
// field, and writes objects back deterministically.
package manifest

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Position is a place in a source file. Line and Column are 1-based; 0 means unknown.
type Position struct {
	File   string
	Line   int
	Column int
}

// String formats the position as file:line:col, omitting what is unknown.
func (p Position) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// Ref identifies an object the way reports name it.
type Ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String formats the reference as Kind/namespace/name.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// Object is one Kubernetes object and where it came from.
//
// Node returns the object's YAML mapping node; its Line and Column fields
// (and those of every node below it) point into File. Objects made by the
// compiler carry the positions of the spec lines that produced them.
//
// Objects read from files keep their decoded content and a position index,
// not their YAML tree: the tree of a large repository is several times the
// size of its content. Locate answers from the index; Node parses the tree
// again from the file's bytes (until Set.DropSources drops them).
type Object struct {
	File string
	// Doc is the 0-based index of the YAML document in File.
	Doc int
	// Item is the index of the object in a List document, or -1.
	Item int

	node atomic.Pointer[yaml.Node]
	// src is the stream the object was read from (nil for objects built in memory).
	src *stream
	// index answers Locate once the node is released (nil: parse again).
	index     posIndex
	line, col int
	// docLines are the lines [first, end) of the object's document in src (end 0: to the end).
	docLines [2]int

	// ReadAhead is set on a copy of a document read ahead of the others
	// (kiln lint's first pass reads the context documents so): the
	// document is read again and judged, so the copy serves only while the
	// checkers prepare, and its content may go as soon as it has served.
	ReadAhead bool

	// Refused is set once admission found that the API server would refuse
	// to create the object: it never exists, so a policy or binding that is
	// refused never takes effect.
	Refused bool
	// Admission is what the admission stage found of the object: nil
	// before it was admitted, when nothing admits it, and once the rule
	// engine let go of a judged object's content.
	Admission *Admission

	APIVersion  string
	Kind        string
	Namespace   string
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	// Unit names the rendered unit the object belongs to (the directory of
	// the chart or kustomization it was rendered from), set by discover; rules
	// that relate objects relate only objects of one unit. Empty for an object
	// read from a plain file: the directory of File (see UnitOf).
	Unit string
	// Cluster names the cluster the object is deployed into when a GitOps
	// controller's unit deploys it (set by discover: the Flux tree or the
	// folder its HelmRelease or Kustomization is in); "" for the others,
	// whose unit is their cluster (see ClusterOf). Objects of one cluster
	// with the same identity are one object even across units.
	Cluster string
	// Via names what rendered the object for the people reading its
	// findings ("Kustomization flux-system/apps"), set by discover; ""
	// for an object read as written or rendered from its own directory.
	Via string
	// ViaIgnore is the kiln.dev/ignore annotation of what rendered the
	// object (Via names it: "Kind namespace/name"), which applies to it too.
	ViaIgnore string
	// Order is the object's place in input order, set by the rule engine:
	// rules that report the first of several objects compare it.
	Order int64

	once    sync.Once
	content map[string]any
	err     error
	notes   []Note
	// noted: notes hold what decoding notices already (a rendered object
	// decoded when made), so decoding again leaves them be.
	noted bool
	// shared holds the decoded content shared with the object's copies
	// (share.go) while the object holds it.
	shared *decodedTree

	// detach holds a rendered object's detachable parts (detach.go).
	detach   *detached
	detachMu sync.Mutex
}

// Notes returns what decoding the object noticed (YAML 1.1 values,
// duplicate keys), decoding it if it was not yet.
func (o *Object) Notes() []Note {
	o.decode(nil)
	return o.notes
}

// NewObject builds an Object from a mapping node, reading its type and metadata.
// It fails if the node is not a mapping or lacks apiVersion or kind.
func NewObject(file string, doc, item int, node *yaml.Node) (*Object, error) {
	pos := Position{File: file, Line: node.Line, Column: node.Column}
	if node.Kind != yaml.MappingNode {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("expected a Kubernetes object (a mapping with apiVersion and kind), found %s", describeNode(node))}
	}
	o := &Object{File: file, Doc: doc, Item: item, line: node.Line, col: node.Column}
	o.node.Store(node)
	var missing []string
	o.APIVersion, missing = scalarField(node, "apiVersion", missing)
	o.Kind, missing = scalarField(node, "kind", missing)
	if len(missing) > 0 {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("object has no %s; every Kubernetes object needs apiVersion and kind", strings.Join(missing, " and "))}
	}
	if md := yamlnode.Value(node, "metadata"); md != nil && md.Kind == yaml.MappingNode {
		o.Name = yamlnode.Scalar(yamlnode.Value(md, "name"))
		if o.Name == "" {
			o.Name = yamlnode.Scalar(yamlnode.Value(md, "generateName"))
		}
		o.Namespace = yamlnode.Scalar(yamlnode.Value(md, "namespace"))
		o.Labels = stringMap(yamlnode.Value(md, "labels"))
		o.Annotations = stringMap(yamlnode.Value(md, "annotations"))
	}
	return o, nil
}

// NewRenderedObject builds an object from a rendered document (a chart's
// or a kustomization's output) whose node positions were mapped onto file:
// nodes with Line 0 are located at their nearest parent. The content is
// decoded at once, so a bad document is an error here, not in a rule; it is
// then let go and decoded again from the node when first read, so that the
// objects of a large tree (each overlay's copy of the same CRDs) do not all
// hold their content while the rest of the tree renders. parts are the
// parts of node it may let go of and read again (Detachable).
func NewRenderedObject(file, unit string, doc int, node *yaml.Node, parts ...Detachable) (*Object, error) {
	o, err := NewObject(file, doc, -1, node)
	if err != nil {
		return nil, err
	}
	o.Unit = unit
	if len(parts) > 0 {
		o.detach = &detached{parts: parts}
	}
	if _, err := o.decode(nil); err != nil {
		return nil, err
	}
	o.once, o.content, o.noted, o.shared = sync.Once{}, nil, true, nil
	return o, nil
}

// Ref returns the object's identity.
func (o *Object) Ref() Ref {
	return Ref{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// Group returns the API group of the object ("" for the core group).
func (o *Object) Group() string {
	if i := strings.LastIndexByte(o.APIVersion, '/'); i >= 0 {
		return o.APIVersion[:i]
	}
	return ""
}

// Version returns the API version without its group.
func (o *Object) Version() string {
	return o.APIVersion[strings.LastIndexByte(o.APIVersion, '/')+1:]
}

// Pos returns the position of the object itself.
func (o *Object) Pos() Position {
	return Position{File: o.File, Line: o.line, Column: o.col}
}

// Node returns the object's YAML node, parsing its file again if the node
// was released (nil once Set.DropSources dropped the file's bytes). Changes
// to the node are kept until ReleaseNode.
func (o *Object) Node() *yaml.Node {
	if n := o.node.Load(); n != nil {
		o.attach()
		return n
	}
	if o.src == nil {
		return nil
	}
	n := o.src.ownNodeOf(o)
	if !o.node.CompareAndSwap(nil, n) {
		return o.node.Load()
	}
	return n
}

// ReleaseNode drops the YAML node of an object read from a file (its decoded
// content stays); Node parses it again on demand. Objects built in memory
// keep their node.
func (o *Object) ReleaseNode() {
	if o.src != nil {
		o.node.Store(nil)
	}
}

// view returns the node for reading positions: the object's own if loaded,
// else one from the stream's short-lived cache (not kept on the object).
func (o *Object) view() *yaml.Node {
	if n := o.node.Load(); n != nil || o.src == nil {
		o.attach()
		return n
	}
	return o.src.nodeOf(o)
}

// Content returns the object as JSON-compatible Go values (map[string]any,
// []any, string, int64, float64, bool, nil). It is decoded once and shared by
// every rule; callers must not modify it.
func (o *Object) Content() (map[string]any, error) { return o.decode(nil) }

// DropContent frees the object's decoded content; Content returns an error
// afterwards. It must not run while something else reads the content (the
// rules engine drops an object's content once every rule has judged it).
func (o *Object) DropContent() {
	o.once.Do(func() {})
	if o.err == nil {
		o.content, o.err, o.shared = nil, errContentDropped, nil
	}
}

// HasContent reports whether the object's content is still there (not
// dropped, and decoded without error).
func (o *Object) HasContent() bool {
	_, err := o.Content()
	return err == nil
}

var errContentDropped = fmt.Errorf("object content was dropped after the rules judged it")

// decode is Content with the strings of the content shared through in.
func (o *Object) decode(in interner) (map[string]any, error) {
	o.once.Do(func() {
		n := o.Node()
		if n == nil {
			o.err = &Error{Pos: o.Pos(), Msg: "object's source was dropped before it was decoded"}
			return
		}
		if o.SharesDecoded() {
			t, err := o.decodeShared(n, in)
			if err != nil {
				o.err = err
				return
			}
			if !o.noted {
				o.notes = t.notes
			}
			o.content, o.shared = t.content, t
			return
		}
		v, notes, err := decode(o.File, n, in)
		if !o.noted {
			o.notes = notes
		}
		if err != nil {
			o.err = err
			return
		}
		o.content, _ = v.(map[string]any)
	})
	return o.content, o.err
}

func scalarField(m *yaml.Node, key string, missing []string) (string, []string) {
	v := yamlnode.Scalar(yamlnode.Value(m, key))
	if v == "" {
		missing = append(missing, key)
	}
	return v, missing
}

func stringMap(n *yaml.Node) map[string]string {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = n.Content[i+1].Value
	}
	return out
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return fmt.Sprintf("a scalar (%q)", truncate(n.Value, 40))
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.AliasNode:
		return "an alias"
	}
	return "an empty document"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// SetContent replaces the object's decoded content, e.g. with the object
// the API server would admit (defaulted, pruned); rules judge it from then
// on. Positions still come from the source. It must not run while something
// else reads the content.
func (o *Object) SetContent(c map[string]any) {
	o.once.Do(func() {})
	o.content, o.err, o.shared = c, nil, nil
}

// UnitOf returns the rendered unit of an object: its Unit, else the
// directory of its file. Files of one directory are what `kubectl apply -f
// DIR` applies together (it does not descend without -R); separate
// directories are separate environments, overlays or examples.
func UnitOf(o *Object) string {
	if o.Unit != "" {
		return o.Unit
	}
	return filepath.Dir(o.File)
}

// ClusterOf returns what the object is deployed into together with other
// units: its Cluster, else its unit (UnitOf). Two units whose objects have
// one ClusterOf deploy into one cluster, so an identity defined in both is
// defined twice there.
func ClusterOf(o *Object) string {
	if o.Cluster != "" {
		return o.Cluster
	}
	return UnitOf(o)
}

// Key names one definition in the input: where it was read and what it
// says it is. Two reads of the same document (a first pass for context, a
// second to judge) give equal keys; two objects of one run never do.
type Key struct {
	Unit, File                        string
	Doc, Item                         int
	APIVersion, Kind, Namespace, Name string
}

// Key returns the object's key.
func (o *Object) Key() Key {
	return Key{Unit: o.Unit, File: o.File, Doc: o.Doc, Item: o.Item, APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// Identity is what makes two definitions one object, the way the API server
// sees it, within one rendered unit: the API group (not the version:
// apps/v1 and apps/v1beta2 Deployments are one object), kind, namespace and
// name. Rules that relate objects key on it, so that copies count once.
type Identity struct {
	Unit, Group, Kind, Namespace, Name string
}

// IdentityOf returns the object's identity.
func IdentityOf(o *Object) Identity {
	return Identity{Unit: UnitOf(o), Group: o.Group(), Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}
