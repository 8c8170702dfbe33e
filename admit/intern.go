package admit

import (
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// share makes the equal subtrees of a schema tree one: every value of the
// root's type that the tree holds (in a field, a pointer, a map or a slice)
// and that equals one met before is replaced by that one, so that equal
// subtrees share their maps, slices and pointers. The tree stays equal to
// what it was (reflect.DeepEqual); it must not be changed afterwards, as
// a change to a shared subtree would show in every place that holds it.
//
// A generated CRD's schema repeats the same subschemas many times
// (argo-workflows' Workflow holds a container's schema in dozens of places:
// 10,111 nodes, 305 distinct), and the server's validators built from it
// hold a tree each (the structural schema and the OpenAPI validator's:
// 13 MB for that one version, 0.6 MB once shared).
func share[T any](root *T) {
	in := &sharer{typ: reflect.TypeFor[T](), ids: map[string]int{}}
	in.intern(reflect.ValueOf(root), false)
}

// sharer interns the values of one type in a tree, bottom up: a node's key
// is its own content with each subtree replaced by the subtree's number.
type sharer struct {
	typ   reflect.Type
	ids   map[string]int
	canon []reflect.Value // pointers to the first of each distinct value
	buf   []byte          // the key being written
	depth int
	bufs  [][]byte        // a key buffer per depth, reused
	temps []reflect.Value // a value per depth for map elements, reused
}

// intern makes the tree under p (a pointer to the sharer's type) share its
// subtrees and returns the number of its value and a pointer to the first
// equal value met: p itself if none, or a copy of it if p is temporary
// (reused for the next map element).
func (in *sharer) intern(p reflect.Value, temporary bool) (int, reflect.Value) {
	// The pointer itself, not the field or map slot it was read from
	// (which a later Set, or the next map element, overwrites).
	p = p.Elem().Addr()
	if in.depth == len(in.bufs) {
		in.bufs = append(in.bufs, nil)
	}
	saved := in.buf
	in.buf = in.bufs[in.depth][:0]
	in.depth++
	ok := in.encode(p.Elem())
	in.depth--
	in.bufs[in.depth] = in.buf
	key := in.buf
	in.buf = saved
	if ok {
		if id, seen := in.ids[string(key)]; seen {
			return id, in.canon[id]
		}
	}
	if temporary {
		c := reflect.New(in.typ)
		c.Elem().Set(p.Elem())
		p = c
	}
	id := len(in.canon)
	in.canon = append(in.canon, p)
	if ok {
		in.ids[string(key)] = id
	}
	return id, p
}

// temp returns a value of the sharer's type for the current depth, to
// intern a map element in.
func (in *sharer) temp() reflect.Value {
	for len(in.temps) <= in.depth {
		in.temps = append(in.temps, reflect.New(in.typ))
	}
	return in.temps[in.depth]
}

// encode writes v's content to the key, interning the values of the
// sharer's type it holds (and making v hold the shared ones). It reports
// false when v holds something it cannot compare by content (a function,
// a channel, an unsafe pointer, a map not keyed by strings), for which no
// value is shared.
func (in *sharer) encode(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			in.buf = append(in.buf, 1)
		} else {
			in.buf = append(in.buf, 0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		in.buf = binary.AppendVarint(in.buf, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		in.buf = binary.AppendUvarint(in.buf, v.Uint())
	case reflect.Float32, reflect.Float64:
		in.buf = binary.AppendUvarint(in.buf, math.Float64bits(v.Float()))
	case reflect.String:
		in.buf = binary.AppendUvarint(in.buf, uint64(v.Len()))
		in.buf = append(in.buf, v.String()...)
	case reflect.Pointer:
		return in.encodePointer(v)
	case reflect.Interface:
		if !in.present(v) {
			return true
		}
		in.buf = strconv.AppendQuote(in.buf, v.Elem().Type().String())
		return in.encode(v.Elem())
	case reflect.Slice:
		if !in.present(v) {
			return true
		}
		in.buf = binary.AppendUvarint(in.buf, uint64(v.Len()))
		for i := range v.Len() {
			if !in.element(v.Index(i)) {
				return false
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if !in.element(v.Index(i)) {
				return false
			}
		}
	case reflect.Map:
		return in.encodeMap(v)
	case reflect.Struct:
		for i := range v.NumField() {
			if !in.element(v.Field(i)) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// encodePointer encodes a pointer: nil, the number of the shared value
// of the sharer's type it now points to, or what it points to.
func (in *sharer) encodePointer(v reflect.Value) bool {
	if !in.present(v) {
		return true
	}
	if v.Type().Elem() == in.typ && v.CanSet() {
		id, c := in.intern(v, false)
		v.Set(c)
		in.buf = binary.AppendUvarint(in.buf, uint64(id))
		return true
	}
	return in.encode(v.Elem())
}

// encodeMap encodes a map keyed by strings, in key order: nil, or its
// length and each key with its element; an element of the sharer's type
// is interned and replaced in the map by the shared one. Maps with other
// keys are not compared (false).
func (in *sharer) encodeMap(v reflect.Value) bool {
	// Schemas' maps are keyed by strings; another map is not compared.
	if v.Type().Key().Kind() != reflect.String {
		return false
	}
	if !in.present(v) {
		return true
	}
	in.buf = binary.AppendUvarint(in.buf, uint64(v.Len()))
	keys := v.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
	settable := v.CanInterface()
	for _, k := range keys {
		in.encode(k)
		elem := v.MapIndex(k)
		if elem.Type() == in.typ && settable {
			p := in.temp()
			p.Elem().Set(elem)
			id, c := in.intern(p, true)
			v.SetMapIndex(k, c.Elem())
			in.buf = binary.AppendUvarint(in.buf, uint64(id))
			continue
		}
		if !in.encode(elem) {
			return false
		}
	}
	return true
}

// present writes whether v (a pointer, interface, slice or map) is nil
// and reports whether it is not.
func (in *sharer) present(v reflect.Value) bool {
	if v.IsNil() {
		in.buf = append(in.buf, 0)
		return false
	}
	in.buf = append(in.buf, 1)
	return true
}

// element encodes an addressable value in place: one of the sharer's
// type is interned and replaced by the shared one.
func (in *sharer) element(v reflect.Value) bool {
	if v.Type() == in.typ && v.CanSet() {
		id, c := in.intern(v.Addr(), false)
		v.Set(c.Elem())
		in.buf = binary.AppendUvarint(in.buf, uint64(id))
		return true
	}
	return in.encode(v)
}
