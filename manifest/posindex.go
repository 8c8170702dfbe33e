package manifest

import (
	"hash/maphash"
	"strconv"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// posIndex is an object's YAML tree reduced to what Locate needs: for every
// node, the position that names it, its kind, and the key it is found under.
// Kept in place of the tree, it answers Locate without parsing the file again
// at a small fraction of the tree's size (24 bytes a node).
//
// Entries are in pre-order: the children of entry i are i+1 up to its end,
// and a child's own subtree ends where its next sibling starts. Aliases are
// expanded, so that the entries below an alias are those of the node it
// refers to, as Locate's walk of the tree finds them.
type posIndex []posEntry

type posEntry struct {
	// key is the hash of the mapping key this node is the value of (0 for a
	// list item or the root). The hash is 64-bit and seeded at random per
	// process: two different keys share one with probability 2^-64, and no
	// input can be written to make them.
	key uint64
	// line and col are where a reader looks for the node: its key's position
	// for a mapping value, its own for a list item.
	line, col uint32
	// endKind is the index just past the node's subtree, with the node's kind
	// (aliases resolved) in the top two bits.
	endKind uint32
}

const (
	kindShift = 30
	endMask   = 1<<kindShift - 1
	kindSeq   = 1
	kindMap   = 2
)

func (e posEntry) end() int     { return int(e.endKind & endMask) }
func (e posEntry) kind() uint32 { return e.endKind >> kindShift }

var keySeed = maphash.MakeSeed()

// keyHash hashes a mapping key; never 0 (0 means "no key").
func keyHash(key string) uint64 {
	if h := maphash.String(keySeed, key); h != 0 {
		return h
	}
	return 1
}

// maxPooledEntries bounds the scratch space a pooled builder keeps.
const maxPooledEntries = 1 << 16

// builders are reused: an index is built in a builder's scratch space and
// copied out at its exact size.
var builders = sync.Pool{New: func() any { return &indexBuilder{} }}

// newPosIndex indexes the tree under root. It returns nil, and the caller
// keeps the tree, when the tree is too large to index: more than
// maxAliasNodes nodes through aliases or maxDepth levels (which Decode
// refuses anyway), or 2^30 nodes.
func newPosIndex(root *yaml.Node) posIndex {
	b := builders.Get().(*indexBuilder)
	defer func() {
		if cap(b.out) > maxPooledEntries {
			b.out = nil // do not keep a huge document's scratch space
		}
		builders.Put(b)
	}()
	b.out, b.budget, b.inAlias = b.out[:0], maxAliasNodes, 0
	if !b.add(root, 0, uint32(root.Line), uint32(root.Column), 0) {
		return nil
	}
	return append(posIndex(nil), b.out...)
}

type indexBuilder struct {
	out     []posEntry
	budget  int
	inAlias int
}

func (b *indexBuilder) add(n *yaml.Node, key uint64, line, col uint32, depth int) bool {
	if depth > maxDepth || len(b.out) >= endMask {
		return false
	}
	aliased := false
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
		aliased = true
	}
	if aliased {
		b.inAlias++
		defer func() { b.inAlias-- }()
	}
	if b.inAlias > 0 {
		if b.budget--; b.budget < 0 {
			return false
		}
	}
	i := len(b.out)
	b.out = append(b.out, posEntry{key: key, line: line, col: col})
	var kind uint32
	if n != nil {
		switch n.Kind {
		case yaml.SequenceNode:
			kind = kindSeq
			for _, c := range n.Content {
				if !b.add(c, 0, uint32(c.Line), uint32(c.Column), depth+1) {
					return false
				}
			}
		case yaml.MappingNode:
			kind = kindMap
			for j := 0; j+1 < len(n.Content); j += 2 {
				k, v := n.Content[j], n.Content[j+1]
				at := k
				if k.Line == 0 {
					at = v
				}
				if !b.add(v, keyHash(k.Value), uint32(at.Line), uint32(at.Column), depth+1) {
					return false
				}
			}
		}
	}
	b.out[i].endKind = uint32(len(b.out)) | kind<<kindShift
	return true
}

// locate mirrors Object.Locate over the index: the position of the most
// specific node on the path that exists, starting from best.
func (ix posIndex) locate(file string, best Position, segs []string) Position {
	i := 0
	for _, seg := range segs {
		c, ok := ix.step(i, seg)
		if !ok {
			break
		}
		i = c
		if e := ix[i]; e.line > 0 {
			best = Position{File: file, Line: int(e.line), Column: int(e.col)}
		}
	}
	return best
}

// step finds the child of entry i named by seg, as step does on the tree.
func (ix posIndex) step(i int, seg string) (int, bool) {
	switch ix[i].kind() {
	case kindSeq:
		k, err := strconv.Atoi(seg)
		if err != nil || k < 0 {
			return 0, false
		}
		for c := i + 1; c < ix[i].end(); c = ix[c].end() {
			if k == 0 {
				return c, true
			}
			k--
		}
	case kindMap:
		h := keyHash(seg)
		for c := i + 1; c < ix[i].end(); c = ix[c].end() {
			if ix[c].key == h {
				return c, true
			}
		}
	}
	return 0, false
}
