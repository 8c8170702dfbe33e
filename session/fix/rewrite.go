package fix

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// rewrite returns src with the documents in changed (by document index)
// replaced by their new trees. Other documents, and the lines of changed
// documents that hold nothing that changed, keep their bytes. reformatted
// lists the documents that could not be patched in place and were encoded
// whole in the style detected from them.
func rewrite(file string, src []byte, changed map[int]*yaml.Node) (out []byte, reformatted []int, err error) {
	origs, err := decodeRoots(src)
	if err != nil {
		return nil, nil, err
	}
	s := newSource(src)
	markers := markerLines(s)
	type region struct {
		start, end int // byte range
		text       string
	}
	var regions []region
	for _, d := range slices.Sorted(maps.Keys(changed)) {
		mod := changed[d]
		if d >= len(origs) || origs[d] == nil {
			return nil, nil, fmt.Errorf("%s: document %d: not found when rewriting", file, d+1)
		}
		orig := origs[d]
		first, last := 1, s.nlines()
		for _, m := range markers {
			if m == orig.Line {
				return nil, nil, &manifest.Error{Pos: manifest.Position{File: file, Line: m, Column: 1},
					Msg: "document starts on its --- line; kiln fix cannot rewrite it (move the content to the next line)"}
			}
			if m < orig.Line {
				first = m + 1
			} else {
				last = m - 1
				break
			}
		}
		start, end := s.lineStart(first), s.lineStart(last+1)
		st := detectStyle(orig)
		text, ok := patchRegion(s, st, first, last, orig, mod)
		if !ok {
			// Comments the parser attached to the root from outside the
			// document's lines (after a --- marker) stay where they are.
			enc, err := st.encode(scrubComments(mod, string(src[start:end])))
			if err != nil {
				return nil, nil, fmt.Errorf("%s: document %d: %v", file, d+1, err)
			}
			text = enc
			reformatted = append(reformatted, d)
		}
		if end == len(src) && !bytes.HasSuffix(src, []byte("\n")) {
			text = strings.TrimSuffix(text, "\n")
		}
		regions = append(regions, region{start, end, text})
	}
	var b bytes.Buffer
	pos := 0
	for _, r := range regions {
		b.Write(src[pos:r.start])
		b.WriteString(r.text)
		pos = r.end
	}
	b.Write(src[pos:])
	return b.Bytes(), reformatted, nil
}

// patchRegion patches the lines first..last of s in place and checks that
// the result parses to mod.
func patchRegion(s *source, st style, first, last int, orig, mod *yaml.Node) (string, bool) {
	p := &patcher{s: s, style: st, lastDoc: last, crlf: bytes.Contains(s.src, []byte("\r\n"))}
	if err := p.diff(orig, mod); err != nil {
		return "", false
	}
	start, end := s.lineStart(first), s.lineStart(last+1)
	for i := range p.edits {
		if p.edits[i].start < start || p.edits[i].end > end {
			return "", false
		}
		p.edits[i].start -= start
		p.edits[i].end -= start
	}
	out, err := apply(s.src[start:end], p.edits)
	if err != nil {
		return "", false
	}
	if !sameContent(out, mod) {
		return "", false
	}
	return string(out), true
}

// sameContent reports whether text is one YAML document that decodes to what want decodes to.
func sameContent(text []byte, want *yaml.Node) bool {
	roots, err := decodeRoots(text)
	if err != nil {
		return false
	}
	var got *yaml.Node
	for _, r := range roots {
		if r != nil {
			if got != nil {
				return false
			}
			got = r
		}
	}
	if got == nil {
		return false
	}
	a, err1 := manifest.Decode("", got)
	b, err2 := manifest.Decode("", want)
	return err1 == nil && err2 == nil && reflect.DeepEqual(a, b)
}

// decodeRoots decodes every document of a stream; empty documents are nil.
func decodeRoots(src []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var out []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(n.Content) == 0 {
			out = append(out, nil)
			continue
		}
		out = append(out, n.Content[0])
	}
}

// markerLines lists the lines that start or end a document ("---", "...").
func markerLines(s *source) []int {
	var out []int
	for l := 1; l <= s.nlines(); l++ {
		t := s.line(l)
		for _, m := range []string{"---", "..."} {
			if t == m || strings.HasPrefix(t, m+" ") || strings.HasPrefix(t, m+"\t") {
				out = append(out, l)
			}
		}
	}
	return out
}

// scrubComments returns a copy of n without the comments that are not in
// region: yaml.v3 attaches a comment on a "---" line to the document's
// first node, and re-encoding it inside the document would duplicate it.
func scrubComments(n *yaml.Node, region string) *yaml.Node {
	cp := *n
	for _, c := range []*string{&cp.HeadComment, &cp.LineComment, &cp.FootComment} {
		for _, line := range strings.Split(*c, "\n") {
			if !strings.Contains(region, strings.TrimSpace(line)) {
				*c = ""
				break
			}
		}
	}
	if len(n.Content) > 0 {
		cp.Content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			cp.Content[i] = scrubComments(c, region)
		}
	}
	return &cp
}
