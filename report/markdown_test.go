package report

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"testing/quick"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// cells splits a Markdown table row into its cells as GitHub does: on
// every pipe not escaped by a backslash, code spans included.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			cur.WriteByte(row[i])
			cur.WriteByte(row[i+1])
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// tables returns the Markdown tables of doc, each as its rows of cells
// (the header first, the delimiter row left out), and fails the test for
// a row whose cells do not match its header's.
func tables(t *testing.T, doc string) [][][]string {
	t.Helper()
	var out [][][]string
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		header := cells(lines[i])
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "| ---") {
			t.Fatalf("line %d: a table row without a header: %q", i+1, lines[i])
		}
		table := [][]string{header}
		for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			row := cells(lines[i])
			if len(row) != len(header) {
				t.Errorf("line %d has %d cells, its header %d: %q", i+1, len(row), len(header), lines[i])
			}
			table = append(table, row)
		}
		out = append(out, table)
	}
	return out
}

// TestMarkdownTables: the summary's tables count what the fixture holds
// (by family and severity, suppressed apart; rules with unsuppressed
// findings; the top findings, errors first) and every row has its
// header's cells, whatever the messages hold.
func TestMarkdownTables(t *testing.T) {
	doc := string(render(t, "markdown", fixture(), Options{}))
	ts := tables(t, doc)
	if len(ts) != 3 {
		t.Fatalf("%d tables, want 3 (families, rules, findings):\n%s", len(ts), doc)
	}
	wantFamilies := [][]string{
		{"family", "error", "warning", "info", "suppressed"},
		{"`psa`", "3", "0", "0", "1"},
		{"`policy`", "0", "1", "1", "0"},
		{"`api`", "0", "1", "0", "0"},
		{"`config`", "0", "1", "0", "0"},
		{"`sidecar`", "0", "0", "0", "1"},
		{"**total**", "3", "3", "1", "2"},
	}
	if got := fmt.Sprint(ts[0]); got != fmt.Sprint(wantFamilies) {
		t.Errorf("families:\n got %v\nwant %v", got, wantFamilies)
	}
	if got := ts[1][1]; fmt.Sprint(got) != fmt.Sprint([]string{"`psa/capabilities_restricted`", "2", "0", "0", "`deploy/web.yaml:12:11`"}) {
		t.Errorf("first rule row %v", got)
	}
	findings := ts[2][1:]
	var sevs []string
	for _, row := range findings {
		sevs = append(sevs, row[0])
	}
	if got, want := strings.Join(sevs, " "), "error error error warning warning warning info"; got != want {
		t.Errorf("top findings' severities %q, want %q (errors first, suppressed left out)", got, want)
	}
	if !strings.Contains(doc, "- 2 suppressed findings (by annotation or config) counted, not listed") {
		t.Errorf("no line counting the suppressed findings:\n%s", doc)
	}
	if !strings.Contains(doc, "- 1 finding was judged at an assumed Pod Security level for namespaces not in the input (shop)") {
		t.Errorf("no line for the finding judged at an assumed level:\n%s", doc)
	}
}

// TestMarkdownBounds: a run with many findings lists mdTopFindings of
// them, errors first, at most mdPerRule of a rule before the others of
// their severity, then says how many more there are.
func TestMarkdownBounds(t *testing.T) {
	res := &rules.Result{}
	for i := 1; i <= 50; i++ {
		res.Findings = append(res.Findings, rules.Finding{Rule: "psa/runAsNonRoot", Severity: rules.Error, Pos: pos("a.yaml", i, 1), Message: "m"})
	}
	res.Findings = append(res.Findings,
		rules.Finding{Rule: "api/removed", Severity: rules.Error, Pos: pos("b.yaml", 1, 1), Message: "gone"},
		rules.Finding{Rule: "sidecar/native", Severity: rules.Warning, Pos: pos("b.yaml", 2, 1), Message: "plain"})
	for i := 1; i <= 15; i++ {
		res.Findings = append(res.Findings, rules.Finding{Rule: fmt.Sprintf("policy/p%02d", i), Severity: rules.Info, Pos: pos("c.yaml", i, 1), Message: "i"})
	}
	res.Summary = summarize(res)
	doc := string(render(t, "markdown", res, Options{}))
	ts := tables(t, doc)
	var listed []string
	for _, row := range ts[2][1:] {
		listed = append(listed, strings.Trim(row[1], "`"))
	}
	want := "psa/runAsNonRoot psa/runAsNonRoot psa/runAsNonRoot api/removed" + strings.Repeat(" psa/runAsNonRoot", mdTopFindings-4)
	if got := strings.Join(listed, " "); got != want {
		t.Errorf("findings listed:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(ts[2][5][2], "a.yaml:4:1") {
		t.Errorf("the list goes on with the fourth finding of the first rule, not %v", ts[2][5])
	}
	if len(ts[1])-1 != mdTopRules {
		t.Errorf("%d rules listed, want %d", len(ts[1])-1, mdTopRules)
	}
	for _, s := range []string{"\n47 more findings: ", "\n8 more rules with findings.\n"} {
		if !strings.Contains(doc, s) {
			t.Errorf("no %q in:\n%s", s, doc)
		}
	}
	// Only errors, fewer than the list holds: the rest of the one rule fills it.
	few := &rules.Result{Findings: res.Findings[:30]}
	few.Summary = summarize(few)
	if ts := tables(t, string(render(t, "markdown", few, Options{}))); len(ts[2])-1 != mdTopFindings {
		t.Errorf("one rule's 30 errors: %d listed, want %d", len(ts[2])-1, mdTopFindings)
	}
}

// TestMarkdownInputErrors: input errors come first, in a table of their
// own, and count in the title.
func TestMarkdownInputErrors(t *testing.T) {
	in := Inputs{Errors: []error{
		&manifest.Error{Pos: manifest.Position{File: "deploy/bad.yaml", Line: 4, Column: 1}, Msg: "invalid YAML: did not find expected key"},
		fmt.Errorf("helm: chart | broken <b>"),
	}, Charts: 1}
	doc := string(render(t, "markdown", &rules.Result{}, Options{Inputs: in}))
	if !strings.HasPrefix(doc, "### kiln lint: 2 input errors, 0 errors, 0 warnings, 0 infos\n") {
		t.Errorf("title:\n%s", doc)
	}
	ts := tables(t, doc)
	want := [][]string{{"where", "problem"}, {"`deploy/bad.yaml:4:1`", "invalid YAML: did not find expected key"}, {"-", `helm: chart \| broken &lt;b&gt;`}}
	if len(ts) != 1 || fmt.Sprint(ts[0]) != fmt.Sprint(want) {
		t.Errorf("tables %v, want only %v", ts, want)
	}
	// An input error's advice comes last: it is cut later than a finding's message.
	long := strings.Repeat("a", mdMaxText) + " run helm dependency build"
	in = Inputs{Errors: []error{fmt.Errorf("%s", long)}}
	if doc := string(render(t, "markdown", &rules.Result{}, Options{Inputs: in})); !strings.Contains(doc, long+" |") {
		t.Errorf("a long input error is cut:\n%s", doc)
	}
	for _, s := range []string{"\nNo findings.\n", "- rendered 1 Helm chart and 0 kustomizations\n"} {
		if !strings.Contains(doc, s) {
			t.Errorf("no %q in:\n%s", s, doc)
		}
	}
}

// unescapeMarkdown undoes mdText's escapes as a Markdown renderer reads
// them: backslash escapes, the three entities, <br> as a line break.
func unescapeMarkdown(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i++
		case strings.HasPrefix(s[i:], "&lt;"):
			b.WriteByte('<')
			i += 3
		case strings.HasPrefix(s[i:], "&gt;"):
			b.WriteByte('>')
			i += 3
		case strings.HasPrefix(s[i:], "&amp;"):
			b.WriteByte('&')
			i += 4
		case strings.HasPrefix(s[i:], "<br>"):
			b.WriteByte('\n')
			i += 3
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// checkMarkdownEscapes states what mdText and mdCode promise for s.
func checkMarkdownEscapes(t *testing.T, s string) {
	t.Helper()
	want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(shorten(s, mdMaxText))
	text := mdText(s, true)
	if strings.ContainsAny(strings.ReplaceAll(text, "<br>", ""), "<>\n\r") {
		t.Errorf("mdText(%q) = %q keeps markup or a line break", s, text)
	}
	if back := unescapeMarkdown(text); back != want {
		t.Errorf("mdText(%q) = %q reads back as %q", s, text, back)
	}
	if c := cells("| " + text + " |"); len(c) != 1 {
		t.Errorf("mdText(%q) = %q splits a table cell", s, text)
	}
	code := mdCode(s)
	if c := cells("| " + code + " |"); len(c) != 1 {
		t.Errorf("mdCode(%q) = %q splits a table cell", s, code)
	}
	if code == "" {
		if s != "" {
			t.Errorf("mdCode(%q) is empty", s)
		}
		return
	}
	if !strings.HasPrefix(code, "`") {
		if code != mdText(s, true) || !strings.Contains(s, `\|`) {
			t.Errorf("mdCode(%q) = %q is neither a code span nor, for a backslash before a pipe, text", s, code)
		}
		return
	}
	fence := code[:strings.IndexFunc(code, func(r rune) bool { return r != '`' })]
	inner := strings.TrimSuffix(strings.TrimPrefix(code, fence), fence)
	if strings.Contains(inner, fence) || strings.ContainsAny(inner, "\r\n") {
		t.Errorf("mdCode(%q) = %q: its content holds its fence or a line break", s, code)
	}
}

func TestMarkdownEscapes(t *testing.T) {
	for _, s := range []string{"", "plain", "a|b", "`x`", "``", "<script>alert(1)</script>", "a\nb\r\nc", "*_[x](y)_*", "$x$ ~~y~~ #1 &amp;", `\|`, "` | `"} {
		checkMarkdownEscapes(t, s)
	}
	if got, want := mdCode("a`b|c"), "``a`b\\|c``"; got != want {
		t.Errorf("mdCode = %q, want %q", got, want)
	}
	if got, want := mdText("<b>1|2</b> & *x*", true), `&lt;b&gt;1\|2&lt;/b&gt; &amp; \*x\*`; got != want {
		t.Errorf("mdText = %q, want %q", got, want)
	}
	long := strings.Repeat("é", mdMaxText+10)
	if got := []rune(mdText(long, false)); len(got) != mdMaxText || got[len(got)-1] != '…' {
		t.Errorf("a long text is %d characters, want %d ending in …", len(got), mdMaxText)
	}
	alphabet := []rune("|||```\\\\<>&*_[]()~$#\r\n aZé")
	cfg := &quick.Config{MaxCount: 3000, Rand: rand.New(rand.NewSource(1))}
	f := func(seed int64) bool {
		r := rand.New(rand.NewSource(seed))
		rs := make([]rune, r.Intn(30))
		for i := range rs {
			rs[i] = alphabet[r.Intn(len(alphabet))]
		}
		checkMarkdownEscapes(t, string(rs))
		return !t.Failed()
	}
	if err := quick.Check(f, cfg); err != nil {
		t.Error(err)
	}
}
