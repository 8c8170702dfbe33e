package rendercache

import (
	"encoding/binary"
	"errors"

	"github.com/kilnhq/kiln/internal/binrec"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxDepth bounds the nesting of a tree a record holds (deeper: not
// recorded; a record claiming more is bad).
const maxDepth = 512

// Encode writes the record; it fails for a tree it cannot write
// faithfully (an alias, a tree nested deeper than maxDepth).
func (r *Record) Encode() ([]byte, error) {
	buf := binary.AppendVarint(nil, r.At)
	buf = binary.AppendUvarint(buf, uint64(len(r.Deps)))
	for _, d := range r.Deps {
		buf = append(buf, d.Kind)
		buf = binrec.AppendString(buf, d.Name)
		buf = append(buf, d.Sum[:]...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(r.Objects)))
	for _, o := range r.Objects {
		for _, s := range []string{o.File, o.Unit, o.Via, o.ViaIgnore, o.Cluster} {
			buf = binrec.AppendString(buf, s)
		}
		buf = binary.AppendVarint(buf, int64(o.Doc))
		var err error
		if buf, err = appendNode(buf, o.Node, 0); err != nil {
			return nil, err
		}
		buf = binary.AppendUvarint(buf, uint64(len(o.Parts)))
		for _, p := range o.Parts {
			for _, v := range []int{p.At, p.Doc, p.Slot} {
				buf = binary.AppendVarint(buf, int64(v))
			}
			buf = binrec.AppendString(buf, p.File)
			buf = append(buf, p.Sum[:]...)
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(r.Warnings)))
	for _, w := range r.Warnings {
		var e *manifest.Error
		if errors.As(w, &e) && e == w {
			buf = append(buf, 1)
			buf = binrec.AppendString(buf, e.Pos.File)
			buf = binary.AppendVarint(buf, int64(e.Pos.Line))
			buf = binary.AppendVarint(buf, int64(e.Pos.Column))
			buf = binrec.AppendString(buf, e.Msg)
			continue
		}
		buf = append(buf, 0)
		buf = binrec.AppendString(buf, w.Error())
	}
	buf = binary.AppendUvarint(buf, uint64(len(r.Extra)))
	for _, s := range r.Extra {
		buf = binrec.AppendString(buf, s)
	}
	return buf, nil
}

// appendNode writes a YAML tree, every field a reader of it sees.
func appendNode(buf []byte, n *yaml.Node, depth int) ([]byte, error) {
	if n == nil || n.Kind == yaml.AliasNode || n.Alias != nil || depth > maxDepth {
		return nil, errUnrecordable
	}
	buf = binary.AppendUvarint(buf, uint64(n.Kind))
	buf = binary.AppendUvarint(buf, uint64(n.Style))
	for _, s := range []string{n.Tag, n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment} {
		buf = binrec.AppendString(buf, s)
	}
	buf = binary.AppendVarint(buf, int64(n.Line))
	buf = binary.AppendVarint(buf, int64(n.Column))
	buf = binary.AppendUvarint(buf, uint64(len(n.Content)))
	for _, c := range n.Content {
		var err error
		if buf, err = appendNode(buf, c, depth+1); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// reader reads a record Encode wrote.
type reader struct{ binrec.Reader }

// count reads a count of items of at least one byte each.
func (r *reader) count() int {
	n := r.Uvarint()
	if n > uint64(len(r.Data)) {
		r.Bad = true
		return 0
	}
	return int(n)
}

// int reads a line, column or index: -1 to 2^31.
func (r *reader) int() int {
	v := r.Varint()
	if v < -1 || v > 1<<31 {
		r.Bad = true
		return 0
	}
	return int(v)
}

func (r *reader) byte() byte {
	if len(r.Data) == 0 {
		r.Bad = true
		return 0
	}
	b := r.Data[0]
	r.Data = r.Data[1:]
	return b
}

func (r *reader) node(depth int) *yaml.Node {
	if depth > maxDepth {
		r.Bad = true
		return nil
	}
	kind, style := r.Uvarint(), r.Uvarint()
	if kind == 0 || kind > uint64(yaml.ScalarNode) || kind == uint64(yaml.AliasNode) || style > 0xff {
		r.Bad = true
		return nil
	}
	n := &yaml.Node{Kind: yaml.Kind(kind), Style: yaml.Style(style)}
	n.Tag, n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment = r.Str(), r.Str(), r.Str(), r.Str(), r.Str(), r.Str()
	n.Line, n.Column = r.int(), r.int()
	k := r.count()
	if r.Bad {
		return nil
	}
	if k > 0 {
		n.Content = make([]*yaml.Node, k)
		for i := range n.Content {
			if n.Content[i] = r.node(depth + 1); r.Bad {
				return nil
			}
		}
	}
	return n
}

// Decode reads a record; ok is false for one that is not whole (a record
// damaged on disk, or not a record): it is then ignored.
func Decode(data []byte) (rec *Record, ok bool) {
	if len(data) == 0 {
		return nil, false
	}
	r := &reader{binrec.Reader{Data: data}}
	rec = &Record{At: r.Varint()}
	for range r.count() {
		d := Dep{Kind: r.byte(), Name: r.Str()}
		if r.Bad || len(r.Data) < 32 {
			return nil, false
		}
		copy(d.Sum[:], r.Data[:32])
		r.Data = r.Data[32:]
		rec.Deps = append(rec.Deps, d)
	}
	for range r.count() {
		o := Object{File: r.Str(), Unit: r.Str(), Via: r.Str(), ViaIgnore: r.Str(), Cluster: r.Str()}
		o.Doc = r.int()
		if o.Node = r.node(0); r.Bad {
			return nil, false
		}
		for range r.count() {
			p := Part{At: r.int(), Doc: r.int(), Slot: r.int(), File: r.Str()}
			if r.Bad || len(r.Data) < 32 {
				return nil, false
			}
			copy(p.Sum[:], r.Data[:32])
			r.Data = r.Data[32:]
			o.Parts = append(o.Parts, p)
		}
		rec.Objects = append(rec.Objects, o)
	}
	for range r.count() {
		switch r.byte() {
		case 1:
			e := &manifest.Error{}
			e.Pos.File = r.Str()
			e.Pos.Line, e.Pos.Column = r.int(), r.int()
			e.Msg = r.Str()
			rec.Warnings = append(rec.Warnings, e)
		case 0:
			rec.Warnings = append(rec.Warnings, errors.New(r.Str()))
		default:
			return nil, false
		}
		if r.Bad {
			return nil, false
		}
	}
	for range r.count() {
		rec.Extra = append(rec.Extra, r.Str())
	}
	if r.Bad || len(r.Data) != 0 {
		return nil, false
	}
	return rec, true
}
