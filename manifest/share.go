package manifest

import (
	"crypto/sha256"
	"io"
	"sync"
	"weak"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A large tree renders the same CustomResourceDefinitions into every
// overlay that includes them (argo-workflows' 12 MB of CRDs in seven
// builds): the copies of one rendered CRD, same source and same tree,
// share one decoded content, held while some copy holds it. Content is
// read-only (whoever changes an object's content sets a new one), so
// sharing it is safe.

// decodedTree is the decoded content of a tree and what decoding noticed.
type decodedTree struct {
	content map[string]any
	notes   []Note
}

// decodedCopies maps a tree's hash to its decodedTree while some object
// holds it.
var decodedCopies sync.Map // [32]byte → weak.Pointer[decodedTree]

// SharesDecoded tells the objects whose decoded content is shared with
// their copies (one map, until the content is set anew): rendered CRDs (an
// object read from a file is decoded from its own bytes).
func (o *Object) SharesDecoded() bool {
	return o.src == nil && o.Kind == "CustomResourceDefinition"
}

// decodeShared decodes n as o's content, or takes the content of a copy
// decoded before.
func (o *Object) decodeShared(n *yaml.Node, in interner) (*decodedTree, error) {
	h := sha256.New()
	io.WriteString(h, o.File)
	h.Write([]byte{0})
	hashNode(h, n, o.sums())
	key := [32]byte(h.Sum(nil))
	if v, ok := decodedCopies.Load(key); ok {
		if t := v.(weak.Pointer[decodedTree]).Value(); t != nil {
			return t, nil
		}
	}
	v, notes, err := decode(o.File, n, in)
	if err != nil {
		return nil, err
	}
	content, _ := v.(map[string]any)
	t := &decodedTree{content: content, notes: notes}
	decodedCopies.Store(key, weak.Make(t))
	return t, nil
}
