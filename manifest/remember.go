package manifest

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"maps"
	"slices"

	"github.com/kilnhq/kiln/internal/binrec"
)

// Cache is kiln lint's content cache (internal/judgecache stores it): it
// remembers across runs what parsing a file gave (ReadFileRemembered) and
// what admitting and judging a batch gave (lint/memo). Get returns nil for
// a key it does not hold; both are called from many goroutines at once,
// and what Get returns must be what Put was given, or nil.
type Cache interface {
	Get(key [32]byte) []byte
	Put(key [32]byte, data []byte)
}

// parsedVersion changes whenever what a record holds, or what parse
// makes of a file, does.
const parsedVersion = "kiln-parsed-v1"

// ReadFileRemembered is ReadFileEach with a cache of what parsing the file
// gave: for bytes parsed before under the same path, the objects are made
// from the record, in the same parts, without parsing (their content and
// YAML tree are read from the bytes when first asked for). Only a file
// that parsed without problem or skip is remembered.
func ReadFileRemembered(path string, n int, fn func(objs []*Object), cache Cache) *Source {
	return readEach(path, nil, n, fn, cache)
}

// readEach reads one file for ReadFileEach and ReadFileRemembered (cache
// nil: nothing remembered).
func readEach(path string, stdin io.Reader, n int, fn func(objs []*Object), cache Cache) *Source {
	data, name, err := ReadBytes(path, stdin)
	src := &Source{Path: name}
	if err != nil {
		src.Errs = append(src.Errs, err)
		return src
	}
	var key [32]byte
	if cache != nil {
		h := sha256.New()
		io.WriteString(h, parsedVersion+"\x00"+name+"\x00")
		h.Write(data)
		key = [32]byte(h.Sum(nil))
	}
	data = normalize(data)
	s := &stream{data: data}
	if cache != nil {
		if parts, ok := restoreParsed(name, cache.Get(key)); ok {
			for _, objs := range parts {
				for _, o := range objs {
					o.src = s
				}
				src.streamed += len(objs)
				fn(objs)
			}
			return src
		}
	}
	var rec []byte
	parts := 0
	skipped, errs := parse(src.Path, data, n, func(objs []*Object) {
		s.retain(objs)
		if cache != nil {
			rec = binary.AppendUvarint(rec, uint64(len(objs)))
			for _, o := range objs {
				rec = appendParsed(rec, o)
			}
			parts++
		}
		src.streamed += len(objs)
		fn(objs)
	})
	src.Skipped, src.Errs = notManifest(src.Path, data, skipped, errs)
	if cache != nil && len(src.Skipped) == 0 && len(src.Errs) == 0 {
		cache.Put(key, append(binary.AppendUvarint(nil, uint64(parts)), rec...))
	}
	return src
}

// appendParsed appends what locates o in its file and what its header
// says.
func appendParsed(buf []byte, o *Object) []byte {
	for _, v := range []int{o.Doc, o.Item, o.line, o.col, o.docLines[0], o.docLines[1]} {
		buf = binary.AppendVarint(buf, int64(v))
	}
	for _, s := range []string{o.APIVersion, o.Kind, o.Namespace, o.Name} {
		buf = binrec.AppendString(buf, s)
	}
	for _, m := range []map[string]string{o.Labels, o.Annotations} {
		if m == nil {
			buf = append(buf, 0)
			continue
		}
		buf = append(buf, 1)
		buf = binary.AppendUvarint(buf, uint64(len(m)))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			buf = binrec.AppendString(binrec.AppendString(buf, k), m[k])
		}
	}
	return buf
}

// parsedReader reads a record appendParsed wrote.
type parsedReader struct{ binrec.Reader }

// int reads an index or a line: -1 (none) to 2^31.
func (r *parsedReader) int() int {
	v := r.Varint()
	if v < -1 || v > 1<<31 {
		r.Bad = true
		return 0
	}
	return int(v)
}

func (r *parsedReader) stringMap() map[string]string {
	if len(r.Data) == 0 {
		r.Bad = true
		return nil
	}
	present := r.Data[0]
	r.Data = r.Data[1:]
	if present == 0 {
		return nil
	}
	n := r.Uvarint()
	if n > uint64(len(r.Data)) {
		r.Bad = true
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.Str()
		m[k] = r.Str()
	}
	return m
}

// restoreParsed makes the objects a record holds, in their parts; ok is
// false for a record that is not whole.
func restoreParsed(file string, rec []byte) (parts [][]*Object, ok bool) {
	r := parsedReader{binrec.Reader{Data: rec}}
	count := r.Uvarint()
	if count > uint64(len(rec)) {
		return nil, false
	}
	for range count {
		n := r.Uvarint()
		if r.Bad || n == 0 || n > uint64(len(r.Data)) {
			return nil, false
		}
		objs := make([]*Object, n)
		for i := range objs {
			o := &Object{File: file}
			o.Doc, o.Item, o.line, o.col, o.docLines[0], o.docLines[1] = r.int(), r.int(), r.int(), r.int(), r.int(), r.int()
			o.APIVersion, o.Kind, o.Namespace, o.Name = r.Str(), r.Str(), r.Str(), r.Str()
			o.Labels, o.Annotations = r.stringMap(), r.stringMap()
			if r.Bad || o.Doc < 0 || o.docLines[0] < 1 {
				return nil, false
			}
			objs[i] = o
		}
		parts = append(parts, objs)
	}
	return parts, !r.Bad && len(r.Data) == 0
}
