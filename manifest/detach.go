package manifest

import (
	"crypto/sha256"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A rendered object's tree can hold large parts that are its source's as
// written (a CRD's schemas, put back into every build's output that
// renders it: discover's sources). Once the object's content is decoded
// and the context has served, nothing reads those parts but a finding
// inside them, which is rare; the object lets go of them then
// (ReleaseDetachable) and reads them again from their source when its tree
// is next asked for. A digest of the tree writes each part's hash, taken
// once, whether the part is held or not.

// Detachable is a part of a rendered object's tree that it can let go of
// and read again.
type Detachable struct {
	// Slot is the part's key and value in their mapping (a slice of the
	// mapping's Content: setting Slot[1] replaces the part in the tree).
	Slot []*yaml.Node
	// Sum is TreeSum of the part.
	Sum [32]byte
	// Load reads the part again: a tree equal to it, positions included
	// (nil if it cannot).
	Load func() *yaml.Node
}

// TreeSum returns a hash of what decoding and locating read of a tree.
func TreeSum(n *yaml.Node) [32]byte {
	h := sha256.New()
	hashNode(h, n, nil)
	return [32]byte(h.Sum(nil))
}

// detached is an object's detachable parts and whether they are let go.
type detached struct {
	parts    []Detachable
	released bool
}

// ReleaseDetachable lets go of the object's detachable parts, if its
// content is held (else decoding would read them again at once). It must
// not run while something else reads the object's tree.
func (o *Object) ReleaseDetachable() {
	if o.detach == nil || !o.HasContent() {
		return
	}
	o.detachMu.Lock()
	defer o.detachMu.Unlock()
	if o.detach.released {
		return
	}
	for _, p := range o.detach.parts {
		old := p.Slot[1]
		// An empty mapping where the part was, at its position: a reader
		// never sees it (attach puts the part back first).
		p.Slot[1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: old.Line, Column: old.Column}
	}
	o.detach.released = true
}

// attach puts the detachable parts back if they were let go.
func (o *Object) attach() {
	if o.detach == nil {
		return
	}
	o.detachMu.Lock()
	defer o.detachMu.Unlock()
	if !o.detach.released {
		return
	}
	for _, p := range o.detach.parts {
		// A part that cannot be read again stays the empty mapping at
		// its position (its findings point there).
		if n := p.Load(); n != nil {
			p.Slot[1] = n
		}
	}
	o.detach.released = false
}

// sums maps each detachable part, as the tree now holds it, to its hash.
func (o *Object) sums() map[*yaml.Node][32]byte {
	o.lockParts()
	defer o.unlockParts()
	return o.sumsLocked()
}

// lockParts keeps the detachable parts as they are until unlockParts.
func (o *Object) lockParts() {
	if o.detach != nil {
		o.detachMu.Lock()
	}
}

func (o *Object) unlockParts() {
	if o.detach != nil {
		o.detachMu.Unlock()
	}
}

// sumsLocked is sums with the parts locked.
func (o *Object) sumsLocked() map[*yaml.Node][32]byte {
	if o.detach == nil {
		return nil
	}
	m := make(map[*yaml.Node][32]byte, len(o.detach.parts))
	for _, p := range o.detach.parts {
		m[p.Slot[1]] = p.Sum
	}
	return m
}
