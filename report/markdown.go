package report

import (
	"bufio"
	"github.com/kilnhq/kiln/internal/plural"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kilnhq/kiln/rules"
)

// Bounds of the Markdown summary, so that it fits a pull-request comment
// (65,536 characters) and a job summary whatever the run found.
const (
	mdTopFindings = 20   // findings listed, errors first
	mdPerRule     = 3    // findings of one rule listed before those of other rules
	mdTopRules    = 10   // rules listed, those with the most errors first
	mdInputErrors = 20   // input errors listed
	mdMaxText     = 400  // characters of a message or a name, then "…"
	mdMaxProblem  = 1000 // characters of an input error (its advice comes last)
)

// writeMarkdown writes a summary in GitHub-flavoured Markdown for a CI job
// summary or a pull-request comment: the summary line, the input errors, a
// table of findings by family and severity, the rules with the most
// findings, and the top findings (errors first, then warnings, then infos;
// of each, in engine order at most mdPerRule of a rule, then the others).
// Suppressed findings are only counted.
//
// Everything that comes from the input (messages, names, paths) is escaped:
// in code spans, or as text whose Markdown and HTML characters are escaped.
func writeMarkdown(w io.Writer, res *rules.Result, in Inputs) error {
	t := newTally()
	top := newTopFindings()
	assumed := map[string]bool{} // the namespaces of the findings judged at an assumed level
	err := res.Each(func(f rules.Finding) error {
		t.add(f)
		if f.Suppressed == nil && !f.Baselined {
			if f.AssumedNamespace != "" {
				assumed[f.AssumedNamespace] = true
			}
			top.add(f)
		}
		return nil
	})
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	writeMDTitle(bw, res.Summary, in)
	writeMDInputErrors(bw, in.errors())
	writeMDFamilies(bw, t)
	if rs := ranked(t.rules, true); len(rs) > 0 {
		writeMDRules(bw, t, rs)
		writeMDTopFindings(bw, t, top.list())
	}
	writeMDNotes(bw, t, res.Summary, in, assumed)
	return bw.Flush()
}

// writeMDTitle writes the heading, which counts the input errors and the
// findings by severity, and the summary line.
func writeMDTitle(bw *bufio.Writer, s rules.Summary, in Inputs) {
	title := plural.Count(s.Errors, "error") + ", " + plural.Count(s.Warnings, "warning") + ", " + plural.Count(s.Infos, "info")
	if n := len(in.Errors); n > 0 {
		title = plural.Count(n, "input error") + ", " + title
	}
	bw.WriteString("### kiln lint: " + title + "\n\n")
	bw.WriteString(mdText(summaryLine(s, in), false) + "\n")
}

// writeMDInputErrors writes a table of the first mdInputErrors input
// errors, and how many more there are.
func writeMDInputErrors(bw *bufio.Writer, errs []inputError) {
	if len(errs) == 0 {
		return
	}
	bw.WriteString("\n#### Input errors\n\nkiln could not read or render these inputs; they fail the run whatever the findings.\n\n")
	bw.WriteString("| where | problem |\n| --- | --- |\n")
	for i, e := range errs {
		if i == mdInputErrors {
			break
		}
		where := "-"
		if e.Pos.File != "" || e.Pos.Line > 0 {
			where = mdCode(e.Pos.String())
		}
		bw.WriteString("| " + where + " | " + mdEscape(shorten(e.Msg, mdMaxProblem), true) + " |\n")
	}
	if n := len(errs) - mdInputErrors; n > 0 {
		bw.WriteString("\n" + plural.Count(n, "more input error") + " (the text format lists them all).\n")
	}
}

// writeMDFamilies writes the table of findings by family and severity
// with its total row, or says there are none.
func writeMDFamilies(bw *bufio.Writer, t *tally) {
	if t.all.Active()+t.all.Suppressed+t.all.Baselined == 0 {
		bw.WriteString("\nNo findings.\n")
		return
	}
	bw.WriteString("\n#### Findings by family\n\n")
	bw.WriteString("| family | error | warning | info | suppressed |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, g := range ranked(t.families, false) {
		bw.WriteString("| " + mdCode(g.Name) + " | " + countCells(g.counts) + " |\n")
	}
	bw.WriteString("| **total** | " + countCells(t.all) + " |\n")
}

// writeMDRules writes the table of the mdTopRules rules of rs (ranked,
// most errors first) with where each was first found.
func writeMDRules(bw *bufio.Writer, t *tally, rs []group) {
	bw.WriteString("\n#### Rules with the most findings\n\n")
	bw.WriteString("| rule | error | warning | info | first at |\n| --- | ---: | ---: | ---: | --- |\n")
	for i, g := range rs {
		if i == mdTopRules {
			break
		}
		c := g.counts
		c.Suppressed = 0
		cells := strconv.Itoa(c.Error) + " | " + strconv.Itoa(c.Warning) + " | " + strconv.Itoa(c.Info)
		bw.WriteString("| " + mdCode(g.Name) + " | " + cells + " | " + mdCode(position(t.firstOf[g.Name])) + " |\n")
	}
	if n := len(rs) - mdTopRules; n > 0 {
		bw.WriteString("\n" + plural.Count(n, "more rule") + " with findings.\n")
	}
}

// writeMDTopFindings writes the table of the findings listed, and how
// many active findings it leaves out.
func writeMDTopFindings(bw *bufio.Writer, t *tally, listed []rules.Finding) {
	bw.WriteString("\n#### Top findings\n\n")
	bw.WriteString("| severity | rule | where | object | message |\n| --- | --- | --- | --- | --- |\n")
	for _, f := range listed {
		object := ""
		if f.Object.Kind != "" {
			object = mdCode(f.Object.String())
		}
		bw.WriteString("| " + f.Severity.String() + " | " + mdCode(f.Rule) + " | " + mdCode(position(f)) + " | " + object + " | " + mdText(f.Message, true) + " |\n")
	}
	if n := t.all.Active() - len(listed); n > 0 {
		bw.WriteString("\n" + plural.Count(n, "more finding") + ": `kiln lint -f text` lists them all, `kiln lint -f html` with their source lines.\n")
	}
}

// writeMDNotes writes a list of what the tables do not say: the
// suppressed and baselined findings counted, the baseline's fixed
// findings, the assumed Pod Security levels and the inputs.
func writeMDNotes(bw *bufio.Writer, t *tally, s rules.Summary, in Inputs, assumed map[string]bool) {
	var notes []string
	if t.all.Suppressed > 0 {
		notes = append(notes, plural.Count(t.all.Suppressed, "suppressed finding")+" (by annotation or config) counted, not listed")
	}
	if t.all.Baselined > 0 {
		notes = append(notes, plural.Count(t.all.Baselined, "baselined finding")+" (in "+in.Baseline+", existing before) counted, not listed")
	}
	if note := FixedNote(in.BaselineFixed); note != "" {
		notes = append(notes, note)
	}
	if n := s.Assumed; n > 0 {
		notes = append(notes, assumedLine(n, assumed))
	}
	notes = append(notes, inputLines(in, false)...)
	if len(notes) > 0 {
		bw.WriteString("\n")
		for _, n := range notes {
			bw.WriteString("- " + mdText(n, false) + "\n")
		}
	}
}

// topFindings keeps the findings a summary lists: of each severity, the
// first mdTopFindings in engine order with at most mdPerRule of a rule,
// and the first mdTopFindings of the others, to fill up with.
type topFindings struct {
	first, overflow [3][]rules.Finding // by severity: error, warning, info
	ofRule          map[string]int     // findings of each rule in first
}

func newTopFindings() *topFindings { return &topFindings{ofRule: map[string]int{}} }

func (t *topFindings) add(f rules.Finding) {
	i := sevIndex(f.Severity)
	switch {
	case len(t.first[i]) < mdTopFindings && t.ofRule[f.Rule] < mdPerRule:
		t.first[i] = append(t.first[i], f)
		t.ofRule[f.Rule]++
	case len(t.overflow[i]) < mdTopFindings:
		t.overflow[i] = append(t.overflow[i], f)
	}
}

// list returns at most mdTopFindings findings, the most severe first; of
// each severity, those of first, then those of overflow to fill the list.
func (t *topFindings) list() []rules.Finding {
	var out []rules.Finding
	for i := range t.first {
		for _, f := range append(t.first[i][:len(t.first[i]):len(t.first[i])], t.overflow[i]...) {
			if len(out) == mdTopFindings {
				return out
			}
			out = append(out, f)
		}
	}
	return out
}

// sevIndex is the index of a severity in severities (infos last).
func sevIndex(s rules.Severity) int {
	switch s {
	case rules.Error:
		return 0
	case rules.Warning:
		return 1
	}
	return 2
}

// countCells are the error, warning, info and suppressed cells of a row.
func countCells(c counts) string {
	return strconv.Itoa(c.Error) + " | " + strconv.Itoa(c.Warning) + " | " + strconv.Itoa(c.Info) + " | " + strconv.Itoa(c.Suppressed)
}

// mdEscaper escapes what Markdown (GitHub's included: tables, strikethrough,
// math) or HTML would read in text: a backslash before each Markdown
// character, entities for HTML's.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "|", `\|`, "~", `\~`, "$", `\$`, "#", `\#`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;",
)

// mdText is s as Markdown text that shows s and nothing else: shortened to
// mdMaxText characters, escaped, its line breaks as <br> in a table cell,
// else as spaces.
func mdText(s string, inTable bool) string {
	return mdEscape(shorten(s, mdMaxText), inTable)
}

// mdEscape is mdText without shortening.
func mdEscape(s string, inTable bool) string {
	s = mdEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if inTable {
		return strings.ReplaceAll(s, "\n", "<br>")
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// mdCode is s as a code span in a table cell: shortened, on one line,
// delimited by more backticks than it holds, its pipes escaped (GitHub
// splits cells on them first, even inside code). A backslash before a
// pipe cannot be written in a code span there (the two would read as an
// escaped backslash and a cell's end): such an s is escaped text instead.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	if strings.Contains(s, `\|`) {
		return mdText(s, true)
	}
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(shorten(s, mdMaxText))
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + strings.ReplaceAll(s, "|", `\|`) + fence
}

// shorten cuts s to most characters, ending it with "…".
func shorten(s string, most int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= most {
		return s
	}
	return string([]rune(s)[:most-1]) + "…"
}
