package report

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// hostile is manifest content that would run or load something if it
// reached the page unescaped.
const hostile = `<script>window.kilnInjected=1</script><img src=x onerror="window.kilnInjected=2"> " ' & </pre></code>`

// between returns what lies between the first open and the next close in s.
func between(t *testing.T, s, open, close string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		t.Fatalf("no %q in the page", open)
	}
	in, _, ok := strings.Cut(rest, close)
	if !ok {
		t.Fatalf("no %q after %q in the page", close, open)
	}
	return in
}

// TestHTMLSelfContained: the page loads nothing (no URL in any src or
// href but its own anchors, no @import or url()), and its
// Content-Security-Policy forbids anything else yet allows its own style
// and script, by hashes of exactly what the page holds.
func TestHTMLSelfContained(t *testing.T) {
	page := string(render(t, "html", fixture(), Options{OpenSource: fixtureSource}))
	for _, m := range regexp.MustCompile(`(?i)\b(src|href|xlink:href|action)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[2], "#") {
			t.Errorf("the page refers to %q", m[0])
		}
	}
	for _, s := range []string{"@import", "url(", "http:", "https:", "//fonts", "<link", "<iframe", "<object", "<embed"} {
		if strings.Contains(page, s) {
			t.Errorf("the page holds %q", s)
		}
	}
	csp := between(t, page, `<meta http-equiv="Content-Security-Policy" content="`, `"`)
	csp = strings.NewReplacer("&#39;", "'", "&#43;", "+", "&#34;", `"`).Replace(csp)
	style := between(t, page, "<style>", "</style>")
	script := between(t, page, "<script>", "</script>")
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	want := "default-src 'none'; style-src " + hash(style) + "; script-src " + hash(script) + "; img-src data:; base-uri 'none'; form-action 'none'"
	if csp != want {
		t.Errorf("Content-Security-Policy\n %s\nwant (hashes of the page's own style and script)\n %s", csp, want)
	}
	if style != htmlStyle || script != htmlScript {
		t.Errorf("the page's style or script is not the embedded one, verbatim")
	}
}

// TestHTMLEscapes: what the input holds (messages, names, rules, file
// names, fields, suppression reasons, source lines) shows as text: the
// page has its own script and nothing else that runs.
func TestHTMLEscapes(t *testing.T) {
	obj := manifest.Ref{APIVersion: "v1", Kind: "Pod", Namespace: "ns" + hostile, Name: hostile}
	res := &rules.Result{Findings: []rules.Finding{
		{Rule: "schema/invalid", Severity: rules.Error, Pos: pos("pod"+hostile+".yaml", 2, 1), Object: obj, Field: hostile, Message: hostile},
		{Rule: "policy/" + hostile, Severity: rules.Warning, Pos: pos("pod"+hostile+".yaml", 3, 1), Object: obj, Message: "m",
			Suppressed: &rules.Suppression{Kind: "annotation", Reason: hostile}, AssumedNamespace: hostile},
	}}
	res.Summary = summarize(res)
	open := func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("a: 1\nname: " + hostile + "\nb: 2\n")), nil
	}
	in := Inputs{Errors: []error{&manifest.Error{Pos: manifest.Position{File: hostile, Line: 1}, Msg: hostile}}, Config: hostile}
	page := string(render(t, "html", res, Options{OpenSource: open, Inputs: in, ToolVersion: hostile}))
	for _, s := range []string{"<script", "</script"} {
		if n := strings.Count(page, s); n != 1 {
			t.Errorf("%d %q in the page, want 1 (its own)", n, s)
		}
	}
	if problems := unsafeMarkup(page); len(problems) != 1 || problems[0] != "<script>" ||
		!strings.HasSuffix(page, "<script>"+htmlScript+"</script>\n</body>\n</html>\n") {
		t.Errorf("the page holds markup from its input (want only its own script, at its end): %q", problems)
	}
	// The check itself sees what it must.
	if problems := unsafeMarkup(`<p class="x">` + hostile + `</p><div onclick="x()">`); len(problems) != 3 {
		t.Errorf("unsafeMarkup on raw markup found %q, want the script, the img and the onclick", problems)
	}
	if strings.Count(page, "</pre>") != strings.Count(page, "<pre") {
		t.Errorf("a source line closed its <pre>")
	}
	if n := strings.Count(page, "&lt;script&gt;window.kilnInjected=1&lt;/script&gt;"); n < 10 {
		t.Errorf("the hostile text shows escaped %d times, want it in every place it came from", n)
	}
}

// unsafeMarkup returns the tags of page that are not of an element the
// template writes (script included: the page's own is checked apart) or
// that have an event handler.
func unsafeMarkup(page string) []string {
	var problems []string
	allowed := map[string]bool{}
	for _, e := range strings.Fields("html head meta title style body header h1 h2 span p ul li section nav label input output " +
		"figure figcaption svg g text rect details summary ol a main div article code pre footer") {
		allowed[e] = true
	}
	attr := `\s+([^\s=>"'/]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?`
	tag := regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)((?:` + attr + `)*)\s*/?>`)
	for _, m := range tag.FindAllStringSubmatch(page, -1) {
		bad := !allowed[strings.ToLower(m[1])]
		for _, a := range regexp.MustCompile(attr).FindAllStringSubmatch(m[2], -1) {
			bad = bad || strings.HasPrefix(strings.ToLower(a[1]), "on")
		}
		if bad {
			problems = append(problems, m[0])
		}
	}
	return problems
}

// TestHTMLCharts: bars are proportional to the largest total, stacked by
// severity, at least a pixel for any finding; suppressed findings are
// not drawn; past chartBars groups, the rest are summed into one bar.
func TestHTMLCharts(t *testing.T) {
	c := barChart("t", []group{
		{Name: "psa", counts: counts{Error: 750, Warning: 250}},
		{Name: "api", counts: counts{Info: 1, Suppressed: 50}},
	})
	var got []int
	for _, b := range c.Bars {
		for _, s := range b.Segments {
			got = append(got, s.X, s.Width)
		}
	}
	want := []int{190, 255, 445, 85, 530, 0, 190, 0, 190, 0, 190, 1}
	if !slices.Equal(got, want) {
		t.Errorf("segments (x, width) %v, want %v", got, want)
	}
	if c.Bars[0].Total != 1000 || c.Bars[1].Total != 1 {
		t.Errorf("totals %d, %d", c.Bars[0].Total, c.Bars[1].Total)
	}
	var many []group
	for i := 0; i < chartBars+3; i++ {
		many = append(many, group{Name: string(rune('a' + i)), counts: counts{Error: 1}})
	}
	c = barChart("t", many)
	if len(c.Bars) != chartBars || c.Bars[chartBars-1].Name != "4 others" || c.Bars[chartBars-1].Counts.Error != 4 {
		last := c.Bars[len(c.Bars)-1]
		t.Errorf("%d bars, the last %q with %d errors; want %d, \"4 others\" with 4", len(c.Bars), last.Name, last.Counts.Error, chartBars)
	}
}

// TestSourceExcerpts: the lines around a position, cut when long; and a
// note, in plain words, whenever they cannot be shown.
func TestSourceExcerpts(t *testing.T) {
	files := map[string]string{
		"a.yaml":     "l1\nl2\nl3\nl4\nl5\nl6\r\nl7\n",
		"long.yaml":  strings.Repeat("x", sourceMaxLine+50) + "\n",
		"empty.yaml": "",
		"big.yaml":   strings.Repeat("a: 1\n", sourceMaxFile/5+1),
		"bin.yaml":   "a\x00b\n",
	}
	open := func(name string) (io.ReadCloser, error) {
		switch name {
		case "secret.yaml":
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
		case "dir":
			return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
		}
		s, ok := files[name]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return io.NopCloser(strings.NewReader(s)), nil
	}
	tests := []struct {
		pos   manifest.Position
		lines string // "n:text" joined by |, * marking the hit
		note  string
	}{
		{pos: pos("a.yaml", 4, 1), lines: "2:l2|3:l3|*4:l4|5:l5|6:l6"},
		{pos: pos("a.yaml", 1, 1), lines: "*1:l1|2:l2|3:l3"},
		{pos: pos("a.yaml", 7, 1), lines: "5:l5|6:l6|*7:l7"},
		{pos: pos("long.yaml", 1, 1), lines: "*1:" + strings.Repeat("x", sourceMaxLine-1) + "…"},
		{pos: pos("a.yaml", 8, 1), note: "source not shown: line 8 is past the end of a.yaml (7 lines)"},
		{pos: pos("empty.yaml", 1, 1), note: "source not shown: line 1 is past the end of empty.yaml (0 lines)"},
		{pos: pos("gone.yaml", 3, 1), note: "source not shown: cannot read gone.yaml: it does not exist (moved or deleted since the run?)"},
		{pos: pos("secret.yaml", 3, 1), note: "source not shown: cannot read secret.yaml: permission denied"},
		{pos: pos("dir", 3, 1), note: "source not shown: cannot read dir: is a directory"},
		{pos: pos("big.yaml", 1, 1), note: "source not shown: big.yaml is larger than 8 MiB"},
		{pos: pos("bin.yaml", 1, 1), note: "source not shown: bin.yaml is not a text file"},
		{pos: pos("<stdin>", 3, 1), note: "source not shown: it was read from standard input"},
		{pos: pos("a.yaml", 0, 0)},
		{pos: pos("", 3, 1)},
	}
	for _, tt := range tests {
		src := newSourceReader(open)
		ex := src.excerpt(tt.pos)
		var lines []string
		for _, l := range ex.Lines {
			s := strconv.Itoa(l.N) + ":" + l.Text
			if l.Hit {
				s = "*" + s
			}
			lines = append(lines, s)
		}
		if got := strings.Join(lines, "|"); got != tt.lines || ex.Note != tt.note {
			t.Errorf("%v: lines %q note %q, want %q %q", tt.pos, got, ex.Note, tt.lines, tt.note)
		}
	}

	// The whole report's budget: once spent, a note instead of lines.
	src := newSourceReader(open)
	src.spent = sourceMaxTotal
	if ex := src.excerpt(pos("a.yaml", 2, 1)); len(ex.Lines) != 0 || !strings.Contains(ex.Note, "already holds its limit of source lines (8 MiB)") {
		t.Errorf("past the budget: %+v", ex)
	}
}
