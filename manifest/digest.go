package manifest

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Digest returns a hash of everything the object was read from and of
// where it was read: its file, unit, document and item, and the bytes of
// its document (read from a file) or its YAML tree with every node's
// position (rendered). Two objects of one digest decode to the same
// content at the same positions, so what judging one gave holds for the
// other (kiln lint's content cache). ok is false for an object built in
// memory without a tree, or whose source was dropped.
func (o *Object) Digest() (sum [32]byte, ok bool) {
	h := sha256.New()
	for _, s := range []string{o.File, o.Unit} {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	ints(h, o.Doc, o.Item, o.line, o.col, o.docLines[0], o.docLines[1])
	var doc []byte
	if o.src != nil {
		doc = o.src.docBytes(o.docLines)
	}
	switch {
	case doc != nil:
		h.Write([]byte{'b'})
		h.Write(doc)
	case o.node.Load() != nil:
		h.Write([]byte{'n'})
		// The detachable parts stay as they are (held or let go) while
		// the tree is read: each is written as its hash.
		o.lockParts()
		hashNode(h, o.node.Load(), o.sumsLocked())
		o.unlockParts()
	default:
		return sum, false
	}
	h.Sum(sum[:0])
	return sum, true
}

// docBytes returns the bytes of the lines [first, end) (end 0: to the end;
// all of them if the lines are not the stream's; nil once dropped).
func (s *stream) docBytes(lines [2]int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		return nil
	}
	if from, to, ok := s.docRange(lines); ok {
		return s.data[from:to]
	}
	return s.data
}

func ints(h hash.Hash, vs ...int) {
	var b [8]byte
	for _, v := range vs {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
}

// nodeHasher writes a tree to a hash through a buffer: a tree has many
// small fields, and each write to the hash costs.
type nodeHasher struct {
	h    hash.Hash
	buf  []byte
	sums map[*yaml.Node][32]byte
}

// hashNode writes what decoding and locating read of n and its children;
// a subtree in sums is written as its sum (Detachable).
func hashNode(h hash.Hash, n *yaml.Node, sums map[*yaml.Node][32]byte) {
	w := nodeHasher{h: h, buf: make([]byte, 0, 32<<10), sums: sums}
	w.node(n, 0)
	h.Write(w.buf)
}

func (w *nodeHasher) node(n *yaml.Node, depth int) {
	if len(w.buf) > 30<<10 {
		w.h.Write(w.buf)
		w.buf = w.buf[:0]
	}
	if n == nil || depth > 10000 {
		w.buf = append(w.buf, 0xff)
		return
	}
	if sum, ok := w.sums[n]; ok {
		w.buf = append(append(w.buf, 0xfe), sum[:]...)
		return
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(n.Kind))
	w.buf = binary.AppendUvarint(w.buf, uint64(n.Style))
	w.buf = binary.AppendUvarint(w.buf, uint64(n.Line))
	w.buf = binary.AppendUvarint(w.buf, uint64(n.Column))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(n.Content)))
	for _, s := range []string{n.Tag, n.Value, n.Anchor} {
		w.buf = binary.AppendUvarint(w.buf, uint64(len(s)))
		if len(w.buf)+len(s) > cap(w.buf) {
			w.h.Write(w.buf)
			w.buf = w.buf[:0]
			io.WriteString(w.h, s)
			continue
		}
		w.buf = append(w.buf, s...)
	}
	if n.Kind == yaml.AliasNode {
		w.node(n.Alias, depth+1)
		return
	}
	for _, c := range n.Content {
		w.node(c, depth+1)
	}
}
