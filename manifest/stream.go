package manifest

import (
	"bytes"
	"runtime"
	"sync"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// stream is the bytes of one input file, kept so that the YAML trees of its
// objects can be parsed again after they were released: the bytes are a
// fraction of the size of the trees.
type stream struct {
	data []byte
	// lineStarts are the byte offsets where lines begin, computed on first use.
	lineStarts []int

	mu    sync.Mutex
	roots map[int]*yaml.Node // parsed document roots by document index; nil when not cached
}

// retainStream makes objs (all read from data) release their YAML trees,
// keeping a position index for Locate, and parse them again from data when a
// caller needs a node.
func retainStream(data []byte, objs []*Object) {
	(&stream{data: data}).retain(objs)
}

// retain is retainStream for objects read from the stream's data.
func (s *stream) retain(objs []*Object) {
	for _, o := range objs {
		o.src = s
		if n := o.node.Load(); n != nil {
			if o.index = newPosIndex(n); o.index == nil {
				continue // too large to index: the object keeps its tree
			}
		}
		o.ReleaseNode()
	}
}

// nodeOf returns the object's node from a fresh parse of the stream. The
// parsed trees stay cached for a few streams at a time, so that resolving
// many positions in one file parses it once.
func (s *stream) nodeOf(o *Object) *yaml.Node {
	return s.node(o, true)
}

// ownNodeOf parses the object's node afresh, for a caller that may change it.
func (s *stream) ownNodeOf(o *Object) *yaml.Node {
	return s.node(o, false)
}

func (s *stream) node(o *Object, cached bool) *yaml.Node {
	if !cached {
		s.mu.Lock()
		root := s.parseDoc(o.docLines)
		s.mu.Unlock()
		return itemOf(root, o.Item)
	}
	s.mu.Lock()
	fresh := s.roots == nil
	if fresh {
		s.roots = map[int]*yaml.Node{}
	}
	root, ok := s.roots[o.Doc]
	if !ok {
		root = s.parseDoc(o.docLines)
		s.roots[o.Doc] = root
	}
	s.mu.Unlock()
	if fresh {
		treeCache.add(s)
	}
	return itemOf(root, o.Item)
}

// itemOf returns root, or its items[item] for an object of a List.
func itemOf(root *yaml.Node, item int) *yaml.Node {
	if root == nil || item < 0 {
		return root
	}
	items := yamlnode.Value(root, "items")
	if items == nil || items.Kind != yaml.SequenceNode || item >= len(items.Content) {
		return nil
	}
	return items.Content[item]
}

// parseDoc parses the lines [first, end) of the stream (end 0: to the end)
// and returns the first document's root, with line numbers of the whole file.
// YAML documents are independent (no anchors across them), so a document
// parses the same on its own.
func (s *stream) parseDoc(lines [2]int) *yaml.Node {
	if s.data == nil {
		return nil // dropped (Set.DropSources)
	}
	from, to, ok := s.docRange(lines)
	if !ok {
		return nil
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(s.data[from:to])).Decode(&doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	shiftLines(doc.Content[0], lines[0]-1, map[*yaml.Node]bool{})
	return doc.Content[0]
}

// docRange returns the byte range of the lines [first, end) of the stream
// (end 0: to the end); the caller holds s.mu.
func (s *stream) docRange(lines [2]int) (from, to int, ok bool) {
	if s.lineStarts == nil {
		s.lineStarts = lineStarts(s.data)
	}
	first, end := lines[0], lines[1]
	if first < 1 || first > len(s.lineStarts) {
		return 0, 0, false
	}
	to = len(s.data)
	if end > first && end <= len(s.lineStarts) {
		to = s.lineStarts[end-1]
	}
	return s.lineStarts[first-1], to, true
}

// lineStarts returns the byte offset at which each line begins.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// markerScan finds the "---" that starts each document of a stream in one
// pass: documents come in order, so it reads each line once.
type markerScan struct {
	data      []byte
	off, line int // the next line to read, and where it starts
}

// startOf returns the line of the last "---" after the previous call's
// rootLine and at or before rootLine: the marker that starts the document
// whose root is there (rootLine itself when there is none, as after "...").
func (m *markerScan) startOf(rootLine int) int {
	if m.line == 0 {
		m.line = 1
	}
	marker := 0
	for m.line <= rootLine && m.off <= len(m.data) {
		rest := m.data[m.off:]
		if bytes.HasPrefix(rest, []byte("---")) && (len(rest) == 3 || rest[3] == ' ' || rest[3] == '\n' || rest[3] == '\r' || rest[3] == '\t') {
			marker = m.line
		}
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			m.off = len(m.data) + 1
		} else {
			m.off += nl + 1
		}
		m.line++
	}
	if marker == 0 {
		return rootLine
	}
	return marker
}

// shiftLines adds delta to the line of every node in a tree.
func shiftLines(n *yaml.Node, delta int, seen map[*yaml.Node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	n.Line += delta
	for _, c := range n.Content {
		shiftLines(c, delta, seen)
	}
}

func (s *stream) drop() {
	s.mu.Lock()
	s.roots = nil
	s.mu.Unlock()
}

// forget drops the stream's bytes for good.
func (s *stream) forget() {
	s.mu.Lock()
	s.roots, s.data, s.lineStarts = nil, nil, nil
	s.mu.Unlock()
}

// treeCache bounds how many streams hold parsed trees at once.
var treeCache = &lru{max: 2 * runtime.GOMAXPROCS(0)}

type lru struct {
	mu      sync.Mutex
	max     int
	streams []*stream
}

// add records that s holds parsed trees, dropping the trees of the stream
// that has held them longest when there are too many.
func (c *lru) add(s *stream) {
	c.mu.Lock()
	for i, x := range c.streams {
		if x == s {
			c.streams = append(c.streams[:i], c.streams[i+1:]...)
			break
		}
	}
	c.streams = append(c.streams, s)
	var evict *stream
	if len(c.streams) > c.max {
		evict, c.streams = c.streams[0], c.streams[1:]
	}
	c.mu.Unlock()
	if evict != nil {
		evict.drop()
	}
}
