package rules

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// The admitted content a record holds is written in a compact binary form
// of JSON-compatible values (map[string]any, []any, string, int64, float64,
// bool, nil): faster both ways than JSON, and exact (an integral float64
// stays a float64).

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
		buf = binary.AppendUvarint(append(buf, tagString), uint64(len(v)))
		return append(buf, v...), nil
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
			buf = binary.AppendUvarint(buf, uint64(len(k)))
			buf = append(buf, k...)
			if buf, err = appendValue(buf, v[k]); err != nil {
				return nil, err
			}
		}
		return buf, nil
	}
	return nil, errUnencodable
}

// valueReader reads what appendValue wrote.
type valueReader struct {
	data []byte
	bad  bool
}

func (r *valueReader) uvarint() uint64 {
	n, k := binary.Uvarint(r.data)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.data = r.data[k:]
	return n
}

func (r *valueReader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.data)) {
		r.bad = true
		return ""
	}
	s := string(r.data[:n])
	r.data = r.data[n:]
	return s
}

func (r *valueReader) value(depth int) any {
	if r.bad || len(r.data) == 0 || depth > 10000 {
		r.bad = true
		return nil
	}
	tag := r.data[0]
	r.data = r.data[1:]
	switch tag {
	case tagNil:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		v, k := binary.Varint(r.data)
		if k <= 0 {
			r.bad = true
			return nil
		}
		r.data = r.data[k:]
		return v
	case tagFloat:
		if len(r.data) < 8 {
			r.bad = true
			return nil
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(r.data))
		r.data = r.data[8:]
		return v
	case tagString:
		return r.str()
	case tagList:
		n := r.uvarint()
		if n > uint64(len(r.data)) { // each element takes a byte at least
			r.bad = true
			return nil
		}
		out := make([]any, n)
		for i := range out {
			out[i] = r.value(depth + 1)
		}
		return out
	case tagMap:
		n := r.uvarint()
		if n > uint64(len(r.data)) {
			r.bad = true
			return nil
		}
		out := make(map[string]any, n)
		for range n {
			k := r.str()
			out[k] = r.value(depth + 1)
		}
		return out
	}
	r.bad = true
	return nil
}

// encodeContent and decodeContent write and read one object's content.
func encodeContent(c map[string]any) ([]byte, error) { return appendValue(nil, c) }

func decodeContent(data []byte) (map[string]any, bool) {
	r := valueReader{data: data}
	v := r.value(0)
	m, ok := v.(map[string]any)
	return m, ok && !r.bad && len(r.data) == 0
}
