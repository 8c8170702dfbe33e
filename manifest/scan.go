package manifest

import (
	"bytes"
	"strings"
)

// Scanned is what a cheap line scan of one YAML document says it is,
// before any parsing: the apiVersion and kind of its top-level mapping.
// Known is false when the scan cannot tell (JSON, flow style, an indented
// or anchored top level, a merge key, a kind given twice); such a document
// is always parsed.
type Scanned struct {
	APIVersion, Kind string
	Known            bool
	// Text is the document's text, for a caller that looks for a name in it.
	Text []byte
}

// Group returns the API group of the scanned apiVersion ("" for core).
func (s Scanned) Group() string {
	if g, _, ok := strings.Cut(s.APIVersion, "/"); ok {
		return g
	}
	return ""
}

// ReadSelected parses only the documents of data for which want says yes
// (and every document the scan cannot tell, and every List): the others
// are blanked out, line for line, so that positions and document indexes
// are those of a full read. The objects keep their position index but not
// the file's bytes. It is the first pass of a lint, which needs only the
// context objects (Namespaces, CRDs, policies) of a large repository.
// Problems are not reported: the full read of the second pass reports them.
func ReadSelected(file string, data []byte, want func(Scanned) bool) []*Object {
	data = normalize(data)
	out := make([]byte, len(data))
	copy(out, data)
	any := false
	for _, c := range chunks(out) {
		s := scanChunk(out[c.start:c.end])
		if !s.hasContent {
			continue
		}
		s.Text = data[c.start:c.end]
		if !s.Known || strings.HasSuffix(s.Kind, "List") || want(s.Scanned) {
			any = true
			continue
		}
		blank(out[c.start:c.end])
	}
	if !any {
		return nil
	}
	objs, _, _ := ParseSkipping(file, out)
	retainStream(out, objs)
	for _, o := range objs {
		if o.src != nil {
			o.src.forget()
		}
	}
	return objs
}

// chunk is the byte range of one document's lines, after its "---" line.
type chunk struct{ start, end int }

// chunks splits data at "---" document markers that start a line.
func chunks(data []byte) []chunk {
	var out []chunk
	start := 0
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		if isMarker(data[i:next]) {
			out = append(out, chunk{start, i})
			start = i // the marker line belongs to the next document
		}
		i = next
	}
	return append(out, chunk{start, len(data)})
}

// isMarker reports whether a line (with or without its line end) is a
// "---" document marker.
func isMarker(line []byte) bool {
	return bytes.HasPrefix(line, []byte("---")) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\n' || line[3] == '\r')
}

// scannedChunk is Scanned plus whether the document has any content.
type scannedChunk struct {
	Scanned
	hasContent bool
}

// scanChunk reads the top-level apiVersion and kind lines of one document.
func scanChunk(doc []byte) scannedChunk {
	var s scannedChunk
	s.Known = true
	kinds, versions := 0, 0
	first := true
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i], doc[i+1:]
		} else {
			doc = nil
		}
		line = bytes.TrimRight(line, "\r")
		if isMarker(line) {
			if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
				s.hasContent, s.Known = true, false // content on the marker line
			}
			continue
		}
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		if line[0] == '%' {
			continue // a directive
		}
		s.hasContent = true
		if len(trimmed) != len(line) {
			if first {
				s.Known = false // an indented top level
			}
			first = false
			continue
		}
		first = false
		if bytes.HasPrefix(line, []byte("...")) || strings.ContainsRune("{[-?<!&*|>\"'", rune(line[0])) {
			s.Known = false
			continue
		}
		if v, ok := topValue(line, "kind:"); ok {
			s.Kind, kinds = v, kinds+1
		} else if v, ok := topValue(line, "apiVersion:"); ok {
			s.APIVersion, versions = v, versions+1
		}
	}
	if kinds != 1 || versions > 1 || s.Kind == "" || strings.ContainsAny(s.Kind+s.APIVersion, "*&!|>{[") {
		s.Known = false
	}
	return s
}

// topValue returns the plain value of a top-level "key: value" line.
func topValue(line []byte, key string) (string, bool) {
	if !bytes.HasPrefix(line, []byte(key)) {
		return "", false
	}
	v := string(line[len(key):])
	if v != "" && v[0] != ' ' && v[0] != '\t' {
		return "", false // another key, e.g. "kinds:"
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		v = v[1 : len(v)-1]
	}
	return v, true
}

// blank replaces a document's content with a null document of the same
// lines: every byte but line ends becomes a space, and the first content
// line starts with "~", so that the document still counts.
func blank(doc []byte) {
	placed := false
	for i := 0; i < len(doc); {
		end := bytes.IndexByte(doc[i:], '\n')
		next := len(doc)
		if end >= 0 {
			next = i + end + 1
		}
		line := doc[i:next]
		content := bytes.TrimRight(line, "\r\n")
		trimmed := bytes.TrimLeft(content, " \t")
		switch {
		case isMarker(line), len(trimmed) == 0, trimmed[0] == '#', content[0] == '%':
			// markers, blank lines, comments and directives stay
		default:
			for j := range content {
				content[j] = ' '
			}
			if !placed {
				content[0] = '~'
				placed = true
			}
		}
		i = next
	}
}
