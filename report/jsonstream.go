package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// jsonStream writes indented JSON piece by piece, so that a report with
// many findings is encoded one finding at a time instead of as one large
// buffer (twice: json.Encoder's indentation copies it). The output is the
// same as json.Encoder with SetIndent("", "  ") and SetEscapeHTML(false).
type jsonStream struct {
	w    *bufio.Writer
	buf  bytes.Buffer
	encs map[int]*json.Encoder // by depth, all writing to buf
	err  error
}

func newJSONStream(w io.Writer) *jsonStream {
	return &jsonStream{w: bufio.NewWriterSize(w, 64<<10), encs: map[int]*json.Encoder{}}
}

// raw writes s as is.
func (s *jsonStream) raw(str string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(str)
	}
}

// value writes v indented as if it started at the given depth (in steps of
// two spaces), without a trailing newline.
func (s *jsonStream) value(depth int, v any) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	enc := s.encs[depth]
	if enc == nil {
		enc = json.NewEncoder(&s.buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent(indent(depth), "  ")
		s.encs[depth] = enc
	}
	if s.err = enc.Encode(v); s.err != nil {
		return
	}
	_, s.err = s.w.Write(bytes.TrimSuffix(s.buf.Bytes(), []byte("\n")))
}

// field writes `"name": value` at depth; last omits the comma.
func (s *jsonStream) field(depth int, name string, v any, last bool) {
	s.raw(indent(depth))
	s.value(depth, name)
	s.raw(": ")
	s.value(depth, v)
	s.raw(comma(last))
}

// array writes `"name": [ ...n items... ]` at depth, item(i) giving each element.
func (s *jsonStream) array(depth int, name string, n int, item func(i int) any, last bool) {
	s.raw(indent(depth))
	s.value(depth, name)
	if n == 0 {
		s.raw(": []" + comma(last))
		return
	}
	s.raw(": [\n")
	for i := range n {
		s.raw(indent(depth + 1))
		s.value(depth+1, item(i))
		s.raw(comma(i == n-1))
	}
	s.raw(indent(depth) + "]" + comma(last))
}

// items writes `"name": [ ...items... ]` at depth, each handing emit the
// elements one at a time, so that their number need not be known first.
// It returns each's error.
func (s *jsonStream) items(depth int, name string, each func(emit func(v any)) error, last bool) error {
	s.raw(indent(depth))
	s.value(depth, name)
	n := 0
	err := each(func(v any) {
		if n == 0 {
			s.raw(": [\n")
		} else {
			s.raw(",\n")
		}
		s.raw(indent(depth + 1))
		s.value(depth+1, v)
		n++
	})
	if n == 0 {
		s.raw(": []" + comma(last))
	} else {
		s.raw("\n" + indent(depth) + "]" + comma(last))
	}
	return err
}

// flush writes out what is buffered and returns the first error.
func (s *jsonStream) flush() error {
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}

func indent(depth int) string {
	const spaces = "                                "
	return spaces[:2*depth]
}

func comma(last bool) string {
	if last {
		return "\n"
	}
	return ",\n"
}
