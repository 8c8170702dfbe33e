package report

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"github.com/kilnhq/kiln/internal/plural"
	"html/template"
	"io"
	"math"
	"strconv"

	"github.com/kilnhq/kiln/rules"
)

// The page's template, style and script, embedded: the report is one file
// that loads nothing (its Content-Security-Policy forbids anything else).
var (
	//go:embed html/report.html.tmpl
	htmlTemplate string
	//go:embed html/report.css
	htmlStyle string
	//go:embed html/report.js
	htmlScript string

	htmlPage = template.Must(template.New("report").Parse(htmlTemplate))
	// htmlPolicy allows only the embedded style and script, by their hashes:
	// no network, and no script that escaped escaping would run.
	htmlPolicy = "default-src 'none'; style-src " + cspHash(htmlStyle) + "; script-src " + cspHash(htmlScript) +
		"; img-src data:; base-uri 'none'; form-action 'none'"
)

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Chart geometry, shared with the script through the svg's data attributes.
const (
	chartLabelWidth = 190 // the names' column
	chartBarMax     = 340 // the longest bar
	chartRow        = 22  // one bar's height with its gap
	chartBars       = 12  // bars at most; the rest are summed into one
)

// htmlHead is what the page shows above the findings.
type htmlHead struct {
	Title, Summary, ToolVersion string
	CSP                         string
	Style                       template.CSS
	All                         counts
	Total                       int // findings listed, suppressed ones included
	Notes                       []string
	Charts                      []htmlChart
	InputErrors                 []htmlPlace
	Files                       []htmlFileEntry
}

// htmlChart is a bar chart of unsuppressed findings, each bar stacked by severity.
type htmlChart struct {
	Title             string
	Width, Height     int
	LabelWidth, BarMx int
	Bars              []htmlBar
}

type htmlBar struct {
	Name, Label string // the full name, and as shown (shortened)
	Y           int
	Counts      counts
	Segments    []htmlSegment
	Total       int
	CountX      int
}

type htmlSegment struct {
	Severity string
	X, Width int
	N        int
}

// htmlFileEntry is a file of the contents and the header of its section.
type htmlFileEntry struct {
	ID, Name string
	Counts   counts
}

// htmlFile is one file's section.
type htmlFile struct {
	htmlFileEntry
	Places []htmlPlace
}

// htmlPlace is a position in a file, its object, the findings there and
// the source lines around it (shown once for them all).
type htmlPlace struct {
	Pos, Object string
	Findings    []htmlFinding
	Source      excerpt
}

type htmlFinding struct {
	Severity, Rule, Field, Message string
	Suppressed, Assumed            string
	Fixable                        bool
}

// writeHTML writes one self-contained page: the summary, the input errors
// with their source lines, bar charts of findings by family and by
// namespace, and every finding grouped by file with the lines around it
// (suppressed ones marked), with a severity filter. It reads the findings
// twice (to count, then to write each file's section) and holds one file's
// findings at a time.
func writeHTML(w io.Writer, res *rules.Result, opts Options) error {
	c, err := countHTML(res, opts.Inputs)
	if err != nil {
		return err
	}
	src := newSourceReader(opts.OpenSource)
	bw := bufio.NewWriter(w)
	if err := htmlPage.ExecuteTemplate(bw, "head", c.head(res.Summary, opts, src)); err != nil {
		return err
	}
	if err := c.writeFiles(bw, res, src); err != nil {
		return err
	}
	if err := htmlPage.ExecuteTemplate(bw, "foot", struct {
		ToolVersion string
		Script      template.JS
	}{opts.ToolVersion, template.JS(htmlScript)}); err != nil {
		return err
	}
	return bw.Flush()
}

// htmlCounts is what the first read of the findings counts: the tally,
// each file's entry (in the order of its first finding) and what the
// notes say.
type htmlCounts struct {
	t       *tally
	files   []htmlFileEntry
	index   map[string]int  // files' indexes by name
	assumed map[string]bool // the namespaces of the findings judged at an assumed level
	fixable int
}

// countHTML reads the findings once to count them.
func countHTML(res *rules.Result, in Inputs) (*htmlCounts, error) {
	c := &htmlCounts{t: newTally(), index: map[string]int{}, assumed: map[string]bool{}}
	err := res.Each(func(f rules.Finding) error {
		c.t.add(f)
		if f.AssumedNamespace != "" && f.Suppressed == nil && !f.Baselined {
			c.assumed[f.AssumedNamespace] = true
		}
		if in.fixable(f) {
			c.fixable++
		}
		i, ok := c.index[f.Pos.File]
		if !ok {
			i = len(c.files)
			c.index[f.Pos.File] = i
			c.files = append(c.files, htmlFileEntry{ID: "file-" + strconv.Itoa(i+1), Name: fileName(f.Pos.File)})
		}
		c.files[i].Counts.add(f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// head is what the page shows above the findings: the title and summary,
// the notes, the charts and the input errors with their source lines.
func (c *htmlCounts) head(s rules.Summary, opts Options, src *sourceReader) htmlHead {
	t := c.t
	head := htmlHead{
		Title:       plural.Count(s.Errors, "error") + ", " + plural.Count(s.Warnings, "warning") + ", " + plural.Count(s.Infos, "info"),
		Summary:     summaryLine(s, opts.Inputs),
		ToolVersion: opts.ToolVersion,
		CSP:         htmlPolicy,
		Style:       template.CSS(htmlStyle),
		All:         t.all,
		Total:       t.all.Active() + t.all.Suppressed + t.all.Baselined,
		Files:       c.files,
		Notes:       c.notes(s, opts.Inputs),
	}
	if n := len(opts.Inputs.Errors); n > 0 {
		head.Title = plural.Count(n, "input error") + ", " + head.Title
	}
	if t.all.Active() > 0 {
		head.Charts = []htmlChart{
			barChart("Findings by family", ranked(t.families, true)),
			barChart("Findings by namespace", ranked(t.namespaces, true)),
		}
	}
	for _, e := range opts.Inputs.errors() {
		head.InputErrors = append(head.InputErrors, htmlPlace{Pos: position(rules.Finding{Pos: e.Pos}), Source: src.excerpt(e.Pos),
			Findings: []htmlFinding{{Severity: "error", Rule: "kiln/input", Message: e.Msg}}})
	}
	return head
}

// notes are the lines under the summary: the suppressed and baselined
// findings, the baseline's fixed ones, the assumed Pod Security levels,
// what kiln fix can repair and the inputs.
func (c *htmlCounts) notes(s rules.Summary, in Inputs) []string {
	var notes []string
	if c.t.all.Suppressed > 0 {
		notes = append(notes, plural.Count(c.t.all.Suppressed, "finding")+" suppressed by annotation or config: listed, marked and counted apart")
	}
	if c.t.all.Baselined > 0 {
		notes = append(notes, plural.Count(c.t.all.Baselined, "finding")+" in the baseline ("+in.Baseline+"): listed, marked and counted apart")
	}
	if note := FixedNote(in.BaselineFixed); note != "" {
		notes = append(notes, note)
	}
	if n := s.Assumed; n > 0 {
		notes = append(notes, assumedLine(n, c.assumed))
	}
	if c.fixable > 0 {
		notes = append(notes, plural.Count(c.fixable, "finding")+" kiln fix can repair (kiln fix --dry-run shows the changes)")
	}
	return append(notes, inputLines(in, false)...)
}

// writeFiles reads the findings again and writes each file's section,
// holding one file's findings at a time.
func (c *htmlCounts) writeFiles(bw *bufio.Writer, res *rules.Result, src *sourceReader) error {
	var ofFile []rules.Finding
	writeFile := func() error {
		if len(ofFile) == 0 {
			return nil
		}
		sec := c.section(ofFile, src)
		clear(ofFile)
		ofFile = ofFile[:0]
		return htmlPage.ExecuteTemplate(bw, "file", sec)
	}
	err := res.Each(func(f rules.Finding) error {
		if len(ofFile) > 0 && f.Pos.File != ofFile[0].Pos.File {
			if err := writeFile(); err != nil {
				return err
			}
		}
		ofFile = append(ofFile, f)
		return nil
	})
	if err == nil {
		err = writeFile()
	}
	return err
}

// section is one file's section: its findings grouped by object, those
// at one position of one object under one place with its source lines.
func (c *htmlCounts) section(ofFile []rules.Finding, src *sourceReader) htmlFile {
	sec := htmlFile{htmlFileEntry: c.files[c.index[ofFile[0].Pos.File]]}
	var last rules.Finding
	for i, f := range groupByObject(ofFile) {
		if i == 0 || f.Pos != last.Pos || f.Object != last.Object {
			p := htmlPlace{Pos: position(f), Source: src.excerpt(f.Pos)}
			if f.Object.Kind != "" {
				p.Object = f.Object.String()
			}
			sec.Places = append(sec.Places, p)
		}
		last = f
		p := &sec.Places[len(sec.Places)-1]
		p.Findings = append(p.Findings, htmlFindingOf(f))
	}
	return sec
}

// fileName is how the page names a finding's file.
func fileName(file string) string {
	if file == "" {
		return "(no file)"
	}
	return file
}

func htmlFindingOf(f rules.Finding) htmlFinding {
	h := htmlFinding{Severity: f.Severity.String(), Rule: f.Rule, Field: f.Field, Message: f.Message,
		Assumed: f.AssumedNamespace, Fixable: f.Fix != nil}
	if f.Suppressed != nil {
		h.Suppressed = suppressionNote(f.Suppressed)
	}
	if f.Baselined {
		h.Suppressed = "in the baseline: existing before"
	}
	return h
}

// barChart lays out one chart of groups (the first chartBars, the rest
// summed): widths proportional to the largest total, as the script
// recomputes them for the severities the filter shows.
func barChart(title string, gs []group) htmlChart {
	gs = capGroups(gs, chartBars)
	c := htmlChart{Title: title, LabelWidth: chartLabelWidth, BarMx: chartBarMax,
		Width: chartLabelWidth + chartBarMax + 50, Height: len(gs) * chartRow}
	most := 0
	for _, g := range gs {
		most = max(most, g.Active())
	}
	for i, g := range gs {
		b := htmlBar{Name: g.Name, Label: g.Name, Y: i * chartRow, Counts: g.counts, Total: g.Active()}
		if r := []rune(b.Label); len(r) > 26 {
			b.Label = string(r[:25]) + "…"
		}
		x := chartLabelWidth
		for _, sev := range severities {
			w := barWidth(g.of(sev), most)
			b.Segments = append(b.Segments, htmlSegment{Severity: sev.String(), X: x, Width: w, N: g.of(sev)})
			x += w
		}
		b.CountX = x + 4
		c.Bars = append(c.Bars, b)
	}
	return c
}

// barWidth is n's share of chartBarMax against the largest total, at
// least a pixel for any finding (report.js's width does the same).
func barWidth(n, most int) int {
	if n == 0 || most == 0 {
		return 0
	}
	return max(1, int(math.Round(float64(n)*chartBarMax/float64(most))))
}
