// Package binrec writes and reads the varint-framed records of kiln's
// caches (the content cache's admitted content and parse records, the
// findings spilled to disk): lengths and integers as varints, strings
// length-prefixed.
package binrec

import "encoding/binary"

// AppendString appends s, prefixed by its length.
func AppendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// Reader reads a record from Data, which it consumes. The first malformed
// field sets Bad; reads after it return zero values.
type Reader struct {
	Data []byte
	Bad  bool
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	v, k := binary.Uvarint(r.Data)
	if k <= 0 {
		r.Bad = true
		return 0
	}
	r.Data = r.Data[k:]
	return v
}

// Varint reads a signed varint.
func (r *Reader) Varint() int64 {
	v, k := binary.Varint(r.Data)
	if k <= 0 {
		r.Bad = true
		return 0
	}
	r.Data = r.Data[k:]
	return v
}

// Str reads a string AppendString wrote.
func (r *Reader) Str() string {
	n := r.Uvarint()
	if r.Bad || n > uint64(len(r.Data)) {
		r.Bad = true
		return ""
	}
	s := string(r.Data[:n])
	r.Data = r.Data[n:]
	return s
}
