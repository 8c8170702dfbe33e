package binrec

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// Values: a compact binary form of JSON-compatible values (map[string]any,
// []any, string, int64, float64, bool, nil), as the content cache writes an
// admitted object's content: faster both ways than JSON, and exact (an
// integral float64 stays a float64).

const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagList
	tagMap
)

var errUnencodable = errors.New("a value of a type content does not hold")

// AppendCanonical appends a compact binary encoding of v, a JSON-compatible
// value (map[string]any, []any, string, int64, float64, bool, nil), to buf:
// map keys in sorted order, so that equal values encode alike (a digest of
// content). It fails on any other type.
func AppendCanonical(buf []byte, v any) ([]byte, error) { return appendValue(buf, v) }

func appendValue(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(buf, tagNil), nil
	case bool:
		if v {
			return append(buf, tagTrue), nil
		}
		return append(buf, tagFalse), nil
	case int64:
		return binary.AppendVarint(append(buf, tagInt), v), nil
	case int:
		return binary.AppendVarint(append(buf, tagInt), int64(v)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(buf, tagFloat), math.Float64bits(v)), nil
	case string:
		return AppendString(append(buf, tagString), v), nil
	case []any:
		buf = binary.AppendUvarint(append(buf, tagList), uint64(len(v)))
		var err error
		for _, e := range v {
			if buf, err = appendValue(buf, e); err != nil {
				return nil, err
			}
		}
		return buf, nil
	case map[string]any:
		buf = binary.AppendUvarint(append(buf, tagMap), uint64(len(v)))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var err error
		for _, k := range keys {
			if buf, err = appendValue(AppendString(buf, k), v[k]); err != nil {
				return nil, err
			}
		}
		return buf, nil
	}
	return nil, errUnencodable
}

// valueReader reads what appendValue wrote.
type valueReader struct{ Reader }

func (r *valueReader) value(depth int) any {
	if r.Bad || len(r.Data) == 0 || depth > 10000 {
		r.Bad = true
		return nil
	}
	tag := r.Data[0]
	r.Data = r.Data[1:]
	switch tag {
	case tagNil:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		return r.Varint()
	case tagFloat:
		if len(r.Data) < 8 {
			r.Bad = true
			return nil
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(r.Data))
		r.Data = r.Data[8:]
		return v
	case tagString:
		return r.Str()
	case tagList:
		n := r.Uvarint()
		if n > uint64(len(r.Data)) { // each element takes a byte at least
			r.Bad = true
			return nil
		}
		out := make([]any, n)
		for i := range out {
			out[i] = r.value(depth + 1)
		}
		return out
	case tagMap:
		n := r.Uvarint()
		if n > uint64(len(r.Data)) {
			r.Bad = true
			return nil
		}
		out := make(map[string]any, n)
		for range n {
			k := r.Str()
			out[k] = r.value(depth + 1)
		}
		return out
	}
	r.Bad = true
	return nil
}

// ReadMap reads a map AppendCanonical wrote, the whole of data; ok is false
// for anything else.
func ReadMap(data []byte) (map[string]any, bool) {
	r := valueReader{Reader{Data: data}}
	v := r.value(0)
	m, ok := v.(map[string]any)
	return m, ok && !r.Bad && len(r.Data) == 0
}
