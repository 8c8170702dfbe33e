package discover

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// renderedDoc is one document of a template's rendered output, as Helm
// splits it, and where its text starts in that output.
type renderedDoc struct {
	text      string
	line, col int // 1-based
}

// splitRendered splits a template's rendered output with Helm's own
// splitter (releaseutil.SplitManifests, which helm template and helm
// install use): a "---" that starts a line ends a document whatever follows
// it on that line, so `---{{ if … }}` and a whitespace-trimmed
// `{{- if … -}}` after "---" (rendered as `---# comment`) split as Helm
// splits them, where a YAML parser would refuse the line. Each document is
// Helm's, trimmed of surrounding space; its start is found in the output so
// that positions stay those of the rendered lines.
func splitRendered(out string) []renderedDoc {
	docs := releaseutil.SplitManifests(out)
	keys := slices.Collect(maps.Keys(docs))
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var res []renderedDoc
	cursor, line, col := 0, 1, 1 // line and col are those of cursor
	for _, k := range keys {
		text := docs[k]
		i := strings.Index(out[cursor:], text)
		if i < 0 {
			// Helm's documents are trimmed pieces of the output, in order:
			// this cannot happen, but a document is never lost over it.
			res = append(res, renderedDoc{text: text, line: line, col: col})
			continue
		}
		line, col = advance(out[cursor:cursor+i], line, col)
		res = append(res, renderedDoc{text: text, line: line, col: col})
		line, col = advance(text, line, col)
		cursor += i + len(text)
	}
	return res
}

// advance returns the line and column after s, starting at line and col
// (columns count characters, as the YAML parser's do).
func advance(s string, line, col int) (int, int) {
	if nl := strings.LastIndexByte(s, '\n'); nl >= 0 {
		return line + strings.Count(s, "\n"), 1 + utf8.RuneCountInString(s[nl+1:])
	}
	return line, col + utf8.RuneCountInString(s)
}

// shiftNode moves a tree parsed on its own to where its text starts in a
// larger text: every line down by lines, and the columns of what is on its
// first line right by cols.
func shiftNode(n *yaml.Node, lines, cols int) {
	if n == nil {
		return
	}
	if n.Line == 1 {
		n.Column += cols
	}
	if n.Line > 0 {
		n.Line += lines
	}
	for _, c := range n.Content {
		shiftNode(c, lines, cols)
	}
}
