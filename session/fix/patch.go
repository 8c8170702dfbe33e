package fix

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Why text patches: yaml.v3 (and so kyaml) re-encodes a node tree in one
// style of its own: it re-indents sequences, re-flows comments, rewrites
// quoting and flow collections. Re-encoding a whole changed document would
// touch every line of it. Instead the patcher compares the document's
// original tree with the fixed one and turns each difference into an edit of
// the original bytes at the changed node only: a scalar token replaced, a
// mapping entry or sequence item inserted or removed (with lines encoded in
// the style detected from the document), a flow collection rewritten on its
// line. Everything else keeps its bytes. The result is re-parsed and checked
// against the fixed tree; if the check fails the caller falls back to
// re-encoding that one document.

// errPatch means a difference the patcher cannot express as a safe text edit.
var errPatch = errors.New("cannot patch in place")

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// source is a file's bytes with a line index.
type source struct {
	src   []byte
	lines []int // lines[i] is the byte offset of line i+1
}

func newSource(src []byte) *source {
	s := &source{src: src, lines: []int{0}}
	for i, b := range src {
		if b == '\n' && i+1 < len(src) {
			s.lines = append(s.lines, i+1)
		}
	}
	return s
}

// nlines is the number of lines.
func (s *source) nlines() int { return len(s.lines) }

// lineStart is the offset of line l (1-based); past the last line, len(src).
func (s *source) lineStart(l int) int {
	if l < 1 {
		return 0
	}
	if l > len(s.lines) {
		return len(s.src)
	}
	return s.lines[l-1]
}

// line returns line l without its newline.
func (s *source) line(l int) string {
	b := s.src[s.lineStart(l):s.lineStart(l+1)]
	return strings.TrimRight(string(b), "\r\n")
}

// indent counts the leading spaces of line l.
func (s *source) indent(l int) int {
	t := s.line(l)
	return len(t) - len(strings.TrimLeft(t, " "))
}

// blankOrComment reports whether line l holds nothing but spaces and a comment.
func (s *source) blankOrComment(l int) bool {
	t := strings.TrimSpace(s.line(l))
	return t == "" || t[0] == '#'
}

// offset turns a 1-based line and column (in characters) into a byte offset.
func (s *source) offset(line, col int) (int, error) {
	if line < 1 || line > s.nlines() || col < 1 {
		return 0, errPatch
	}
	off := s.lineStart(line)
	text := s.line(line)
	for i := 1; i < col; i++ {
		if text == "" {
			return 0, errPatch
		}
		_, n := utf8.DecodeRuneInString(text)
		text = text[n:]
		off += n
	}
	return off, nil
}

// patcher turns the differences between two trees of one document into edits.
type patcher struct {
	s       *source
	style   style
	lastDoc int // last line of the document (inclusive)
	crlf    bool
	edits   []edit
}

// diff records edits that turn orig's text into mod.
func (p *patcher) diff(orig, mod *yaml.Node) error {
	if orig.Kind == yaml.AliasNode || mod.Kind == yaml.AliasNode {
		// An alias follows its anchor, whose own changes are patched where it is.
		if orig.Kind == mod.Kind && orig.Value == mod.Value {
			return nil
		}
		return errPatch
	}
	if orig.Kind != mod.Kind {
		return errPatch
	}
	if orig.Style&yaml.FlowStyle != 0 && orig.Kind != yaml.ScalarNode {
		if equalNodes(orig, mod) {
			return nil
		}
		return p.replaceFlow(orig, mod)
	}
	switch orig.Kind {
	case yaml.ScalarNode:
		if orig.Value == mod.Value && orig.ShortTag() == mod.ShortTag() {
			return nil
		}
		return p.replaceScalar(orig, mod)
	case yaml.MappingNode:
		return p.diffMapping(orig, mod)
	case yaml.SequenceNode:
		return p.diffSequence(orig, mod)
	case yaml.DocumentNode:
		if len(orig.Content) != 1 || len(mod.Content) != 1 {
			return errPatch
		}
		return p.diff(orig.Content[0], mod.Content[0])
	}
	return errPatch
}

func (p *patcher) add(start, end int, text string) {
	if p.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	p.edits = append(p.edits, edit{start, end, text})
}

// replaceScalar replaces a single-line plain or quoted scalar token.
func (p *patcher) replaceScalar(orig, mod *yaml.Node) error {
	if orig.Style&(yaml.LiteralStyle|yaml.FoldedStyle|yaml.TaggedStyle) != 0 || orig.Anchor != "" {
		return errPatch
	}
	start, err := p.s.offset(orig.Line, orig.Column)
	if err != nil {
		return err
	}
	end, err := tokenEnd(p.s.src, start, orig)
	if err != nil {
		return err
	}
	n := *mod
	n.Style = orig.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle)
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	text, err := encodeFlow(&n)
	if err != nil {
		return err
	}
	p.add(start, end, text)
	return nil
}

// tokenEnd finds the end of the scalar token that starts at start.
func tokenEnd(src []byte, start int, n *yaml.Node) (int, error) {
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := start + 1; i < len(src); i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			case '\n':
				return 0, errPatch
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := start + 1; i < len(src); i++ {
			switch src[i] {
			case '\'':
				if i+1 < len(src) && src[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			case '\n':
				return 0, errPatch
			}
		}
	default:
		if n.Value != "" && !strings.Contains(n.Value, "\n") && bytes.HasPrefix(src[start:], []byte(n.Value)) {
			return start + len(n.Value), nil
		}
	}
	return 0, errPatch
}

// replaceFlow rewrites a flow collection on its line.
func (p *patcher) replaceFlow(orig, mod *yaml.Node) error {
	if orig.Anchor != "" {
		return errPatch
	}
	start, err := p.s.offset(orig.Line, orig.Column)
	if err != nil {
		return err
	}
	end, err := flowEnd(p.s.src, start)
	if err != nil {
		return err
	}
	n := *mod
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	text, err := encodeFlow(&n)
	if err != nil {
		return err
	}
	p.add(start, end, text)
	return nil
}

// flowEnd finds the end of the flow collection that opens at start.
func flowEnd(src []byte, start int) (int, error) {
	if start >= len(src) || (src[start] != '{' && src[start] != '[') {
		return 0, errPatch
	}
	depth := 0
	for i := start; i < len(src); i++ {
		switch c := src[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(src); i++ {
				if src[i] == '\'' {
					if i+1 < len(src) && src[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '#':
			if i > 0 && (src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '\n') {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
		}
	}
	return 0, errPatch
}

// diffMapping matches entries by key: removed ones are deleted, new ones
// inserted before the next existing key (or at the end), common ones compared.
func (p *patcher) diffMapping(orig, mod *yaml.Node) error {
	if len(orig.Content) == 0 {
		return errPatch
	}
	col := orig.Content[0].Column
	origIdx := map[string]int{}
	for i := 0; i+1 < len(orig.Content); i += 2 {
		origIdx[orig.Content[i].Value] = i
	}
	modIdx := map[string]int{}
	for i := 0; i+1 < len(mod.Content); i += 2 {
		modIdx[mod.Content[i].Value] = i
	}
	for i := 0; i+1 < len(orig.Content); i += 2 {
		if _, kept := modIdx[orig.Content[i].Value]; !kept {
			start, end, err := p.entryExtent(orig, i, true)
			if err != nil || start < 0 {
				return errPatch
			}
			p.add(start, end, "")
		}
	}
	for i := 0; i+1 < len(mod.Content); i += 2 {
		key := mod.Content[i].Value
		oi, ok := origIdx[key]
		if !ok {
			off, err := insertOffset(i+2, len(mod.Content)-1, 2, len(orig.Content)-2,
				func(j int) (int, bool) { k, ok := origIdx[mod.Content[j].Value]; return k, ok },
				func(k int, withHead bool) (int, int, error) { return p.entryExtent(orig, k, withHead) })
			if err != nil {
				return err
			}
			text, err := p.style.encodeEntry(mod.Content[i], mod.Content[i+1], col-1)
			if err != nil {
				return err
			}
			p.insert(off, text)
			continue
		}
		ov, mv := orig.Content[oi+1], mod.Content[i+1]
		if needsReplace(ov, mv) {
			start, end, err := p.entryExtent(orig, oi, false)
			if err != nil || start < 0 {
				return errPatch
			}
			text, err := p.style.encodeEntry(mod.Content[i], mv, col-1)
			if err != nil {
				return err
			}
			p.add(start, end, text)
			continue
		}
		if err := p.diff(ov, mv); err != nil {
			return err
		}
	}
	return nil
}

// insertOffset is the offset where an element new in the modified
// mapping or sequence goes: before the first later element the original
// holds (the modified elements from, from+step, … below to; inOrig gives
// an element's index in the original), with the comment lines above it,
// else after the original's last element (index last). extent is the
// byte range of an original element (entryExtent, itemExtent).
func insertOffset(from, to, step, last int, inOrig func(int) (int, bool), extent func(i int, withHead bool) (int, int, error)) (int, error) {
	for k := from; k < to; k += step {
		if at, ok := inOrig(k); ok {
			start, _, err := extent(at, true)
			if err != nil || start < 0 {
				return 0, errPatch
			}
			return start, nil
		}
	}
	_, end, err := extent(last, false)
	return end, err
}

// needsReplace reports whether a value must be rewritten as a whole: its
// kind changed, or a block collection became empty (an empty one is written
// in flow style).
func needsReplace(o, m *yaml.Node) bool {
	if o.Kind == yaml.AliasNode || m.Kind == yaml.AliasNode {
		return false
	}
	if o.Kind != m.Kind {
		return true
	}
	block := o.Style&yaml.FlowStyle == 0 && (o.Kind == yaml.MappingNode || o.Kind == yaml.SequenceNode)
	return block && len(o.Content) > 0 && len(m.Content) == 0
}

// insert adds text at off, keeping a file that does not end in a newline valid.
func (p *patcher) insert(off int, text string) {
	if off == len(p.s.src) && len(p.s.src) > 0 && p.s.src[len(p.s.src)-1] != '\n' {
		text = "\n" + strings.TrimSuffix(text, "\n")
	}
	p.add(off, off, text)
}

// entryExtent returns the byte range of the mapping entry at key index i:
// from its key's line (with the comment lines above it when withHead) to the
// end of its value's last line. When the key does not start its line (the
// first key of a sequence item) the start is -1.
func (p *patcher) entryExtent(m *yaml.Node, i int, withHead bool) (int, int, error) {
	k, v := m.Content[i], m.Content[i+1]
	if k.Kind != yaml.ScalarNode || k.Line < 1 || k.Line > p.lastDoc {
		return 0, 0, errPatch
	}
	compact := v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && v.Column == k.Column
	first := k.Line
	if withHead {
		first = p.headStart(k.Line, k.Column-1)
	}
	last := p.blockEnd(k.Line, k.Column-1, compact)
	start := p.s.lineStart(first)
	if p.s.indent(k.Line) != k.Column-1 {
		start = -1
	}
	return start, p.s.lineStart(last + 1), nil
}

// headStart walks up from line l over comment lines at the same indentation.
func (p *patcher) headStart(l, ind int) int {
	for l > 1 {
		t := p.s.line(l - 1)
		if strings.TrimSpace(t) == "" || !strings.HasPrefix(strings.TrimLeft(t, " "), "#") || p.s.indent(l-1) != ind {
			break
		}
		l--
	}
	return l
}

// blockEnd returns the last line of the block that starts on line l at
// indentation ind: the following lines indented deeper (and, for a compact
// sequence value, its "- " lines at ind), ignoring trailing blank and comment lines.
func (p *patcher) blockEnd(l, ind int, compact bool) int {
	last := l
	for n := l + 1; n <= p.lastDoc; n++ {
		if p.s.blankOrComment(n) {
			continue
		}
		in := p.s.indent(n)
		t := strings.TrimLeft(p.s.line(n), " ")
		if in > ind || (compact && in == ind && (t == "-" || strings.HasPrefix(t, "- "))) {
			last = n
			continue
		}
		break
	}
	return last
}

// itemExtent returns the byte range of item i of a block sequence, with the
// comment lines above it when withHead.
func (p *patcher) itemExtent(seq *yaml.Node, i int, withHead bool) (int, int, error) {
	it := seq.Content[i]
	ind := seq.Column - 1
	dash, err := p.s.offset(it.Line, seq.Column)
	if err != nil || p.s.src[dash] != '-' || p.s.indent(it.Line) != ind {
		return 0, 0, errPatch
	}
	first := it.Line
	if withHead {
		first = p.headStart(it.Line, ind)
	}
	last := p.blockEnd(it.Line, ind, false)
	return p.s.lineStart(first), p.s.lineStart(last + 1), nil
}

// diffSequence matches items by identity (a mapping's name, a scalar's
// value, else position), deletes and inserts the rest, compares the matches.
func (p *patcher) diffSequence(orig, mod *yaml.Node) error {
	if len(orig.Content) == 0 {
		return errPatch
	}
	pairs := matchItems(orig.Content, mod.Content)
	matchedOrig := map[int]bool{}
	for _, pr := range pairs {
		matchedOrig[pr[0]] = true
	}
	for i := range orig.Content {
		if !matchedOrig[i] {
			start, end, err := p.itemExtent(orig, i, true)
			if err != nil {
				return err
			}
			p.add(start, end, "")
		}
	}
	modToOrig := map[int]int{}
	for _, pr := range pairs {
		modToOrig[pr[1]] = pr[0]
	}
	for j, it := range mod.Content {
		if oi, ok := modToOrig[j]; ok {
			if err := p.diff(orig.Content[oi], it); err != nil {
				return err
			}
			continue
		}
		off, err := insertOffset(j+1, len(mod.Content), 1, len(orig.Content)-1,
			func(k int) (int, bool) { oi, ok := modToOrig[k]; return oi, ok },
			func(k int, withHead bool) (int, int, error) { return p.itemExtent(orig, k, withHead) })
		if err != nil {
			return err
		}
		text, err := p.style.encodeItem(it, orig.Column-1)
		if err != nil {
			return err
		}
		p.insert(off, text)
	}
	return nil
}

// itemKey identifies a sequence item for matching.
func itemKey(n *yaml.Node, i int) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return "v:" + n.Value
	case yaml.MappingNode:
		for k := 0; k+1 < len(n.Content); k += 2 {
			if n.Content[k].Value == "name" && n.Content[k+1].Kind == yaml.ScalarNode {
				return "n:" + n.Content[k+1].Value
			}
		}
	}
	return fmt.Sprintf("i:%d", i)
}

// matchItems pairs items of a and b by a longest common subsequence of their keys.
func matchItems(a, b []*yaml.Node) [][2]int {
	ka := make([]string, len(a))
	for i, n := range a {
		ka[i] = itemKey(n, i)
	}
	kb := make([]string, len(b))
	for i, n := range b {
		kb[i] = itemKey(n, i)
	}
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if ka[i] == kb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out [][2]int
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case ka[i] == kb[j]:
			out = append(out, [2]int{i, j})
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

// apply applies non-overlapping edits (insertions at one offset keep their order).
func apply(src []byte, edits []edit) ([]byte, error) {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].end < edits[j].end // insertions before a deletion at the same place
	})
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		if e.start < pos || e.end < e.start || e.end > len(src) {
			return nil, errPatch
		}
		out.Write(src[pos:e.start])
		out.WriteString(e.text)
		pos = e.end
	}
	out.Write(src[pos:])
	return out.Bytes(), nil
}

// equalNodes compares two trees by kind, tag, value and content (not position, style or comments).
func equalNodes(a, b *yaml.Node) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind != b.Kind || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode && a.ShortTag() != b.ShortTag() {
		return false
	}
	if a.Kind == yaml.AliasNode {
		return equalNodes(a.Alias, b.Alias)
	}
	for i := range a.Content {
		if !equalNodes(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
