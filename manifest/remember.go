package manifest

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"maps"
	"slices"
)

// ParseCache remembers across runs what parsing a file gave (kiln lint's
// content cache, which also holds what judging it gave): Get returns nil
// for a key it does not hold.
type ParseCache interface {
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
func ReadFileRemembered(path string, n int, fn func(objs []*Object), cache ParseCache) *Source {
	return readEach(path, nil, n, fn, cache)
}

// readEach reads one file for ReadFileEach and ReadFileRemembered (cache
// nil: nothing remembered).
func readEach(path string, stdin io.Reader, n int, fn func(objs []*Object), cache ParseCache) *Source {
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
		buf = appendString(buf, s)
	}
	for _, m := range []map[string]string{o.Labels, o.Annotations} {
		if m == nil {
			buf = append(buf, 0)
			continue
		}
		buf = append(buf, 1)
		buf = binary.AppendUvarint(buf, uint64(len(m)))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			buf = appendString(appendString(buf, k), m[k])
		}
	}
	return buf
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// parsedReader reads a record appendParsed wrote.
type parsedReader struct {
	data []byte
	bad  bool
}

func (r *parsedReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.data)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.data = r.data[k:]
	return v
}

func (r *parsedReader) int() int {
	v, k := binary.Varint(r.data)
	if k <= 0 || v < -1 || v > 1<<31 {
		r.bad = true
		return 0
	}
	r.data = r.data[k:]
	return int(v)
}

func (r *parsedReader) string() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.data)) {
		r.bad = true
		return ""
	}
	s := string(r.data[:n])
	r.data = r.data[n:]
	return s
}

func (r *parsedReader) stringMap() map[string]string {
	if len(r.data) == 0 {
		r.bad = true
		return nil
	}
	present := r.data[0]
	r.data = r.data[1:]
	if present == 0 {
		return nil
	}
	n := r.uvarint()
	if n > uint64(len(r.data)) {
		r.bad = true
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.string()
		m[k] = r.string()
	}
	return m
}

// restoreParsed makes the objects a record holds, in their parts; ok is
// false for a record that is not whole.
func restoreParsed(file string, rec []byte) (parts [][]*Object, ok bool) {
	r := parsedReader{data: rec}
	count := r.uvarint()
	if count > uint64(len(rec)) {
		return nil, false
	}
	for range count {
		n := r.uvarint()
		if r.bad || n == 0 || n > uint64(len(r.data)) {
			return nil, false
		}
		objs := make([]*Object, n)
		for i := range objs {
			o := &Object{File: file}
			o.Doc, o.Item, o.line, o.col, o.docLines[0], o.docLines[1] = r.int(), r.int(), r.int(), r.int(), r.int(), r.int()
			o.APIVersion, o.Kind, o.Namespace, o.Name = r.string(), r.string(), r.string(), r.string()
			o.Labels, o.Annotations = r.stringMap(), r.stringMap()
			if r.bad || o.Doc < 0 || o.docLines[0] < 1 {
				return nil, false
			}
			objs[i] = o
		}
		parts = append(parts, objs)
	}
	return parts, !r.bad && len(r.data) == 0
}
