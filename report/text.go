package report

import (
	"bufio"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fatih/color"
	"github.com/kilnhq/kiln/internal/plural"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// writeText prints findings grouped by file: a header line per file, then
// `file:line:col  severity  rule  message` per finding, then a summary line.
// Suppressed findings are listed only with opts.ShowSuppressed.
func writeText(w io.Writer, res *rules.Result, opts Options) error {
	tw := &textWriter{bw: bufio.NewWriter(w), opts: opts, first: true, assumed: map[string]bool{}}
	// One file's findings at a time (they come together), grouped by object.
	err := res.Each(func(f rules.Finding) error {
		if len(tw.ofFile) > 0 && f.Pos.File != tw.ofFile[0].Pos.File {
			tw.writeFile()
		}
		tw.ofFile = append(tw.ofFile, f)
		return nil
	})
	if err != nil {
		return err
	}
	tw.writeFile()
	tw.writeClosing(res)
	return tw.bw.Flush()
}

// textSeverity is how the text format paints each severity.
var textSeverity = map[rules.Severity][]color.Attribute{
	rules.Error:   {color.FgRed, color.Bold},
	rules.Warning: {color.FgYellow},
	rules.Info:    {color.FgCyan},
}

// textWriter is the state of one text report: the file and object the
// last line was under (each is named once), the findings of the file being
// read, and what the closing lines count.
type textWriter struct {
	bw     *bufio.Writer
	opts   Options
	first  bool // no file written yet
	file   string
	object manifest.Ref
	ofFile []rules.Finding // the current file's findings, in engine order

	fixable int
	assumed map[string]bool // the namespaces of the findings judged at an assumed level
}

// paint colours s when the caller asked for colour.
func (tw *textWriter) paint(s string, attrs ...color.Attribute) string {
	if !tw.opts.Color {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor() // the caller decided; ignore fatih/color's own terminal detection
	return c.Sprint(s)
}

// writeFile writes the findings of one file, those of an object together,
// and empties ofFile for the next.
func (tw *textWriter) writeFile() {
	for _, f := range groupByObject(tw.ofFile) {
		tw.writeFinding(f)
	}
	clear(tw.ofFile)
	tw.ofFile = tw.ofFile[:0]
}

// writeFinding counts f for the closing lines and, unless it is a
// suppressed finding not to show, writes it under its file's and object's
// headers.
func (tw *textWriter) writeFinding(f rules.Finding) {
	if tw.opts.Inputs.fixable(f) {
		tw.fixable++
	}
	if f.AssumedNamespace != "" && f.Suppressed == nil && !f.Baselined {
		tw.assumed[f.AssumedNamespace] = true
	}
	if f.Suppressed != nil && !tw.opts.ShowSuppressed {
		return
	}
	tw.writeHeaders(f)
	tw.writeLine(f)
}

// writeHeaders names f's file when it is not the last line's (a blank
// line before each but the first) and its object when it changes.
func (tw *textWriter) writeHeaders(f rules.Finding) {
	if tw.first || f.Pos.File != tw.file {
		if !tw.first {
			tw.bw.WriteString("\n")
		}
		tw.first = false
		tw.file = f.Pos.File
		header := tw.file
		if header == "" {
			header = "(no file)"
		}
		tw.bw.WriteString(tw.paint(header, color.Bold) + "\n")
		tw.object = manifest.Ref{}
	}
	if f.Object != tw.object && f.Object != (manifest.Ref{}) {
		tw.bw.WriteString("  " + tw.paint(f.Object.String(), color.Bold) + "\n")
	}
	tw.object = f.Object
}

// writeLine writes the finding's line: position, severity, rule and
// message with its notes, the message on lines of its own when the line
// would be wider than opts.Width.
func (tw *textWriter) writeLine(f rules.Finding) {
	sev := tw.paint(f.Severity.String(), textSeverity[f.Severity]...)
	msg := indentLines(f.Message)
	if f.Via != "" {
		msg += " (via " + f.Via + ")"
	}
	if f.Suppressed != nil {
		sev = tw.paint(f.Severity.String(), color.Faint)
		msg += " " + tw.paint("["+indentLines(suppressionNote(f.Suppressed))+"]", color.Faint)
	}
	if f.Baselined {
		sev = tw.paint(f.Severity.String(), color.Faint)
		msg += " " + tw.paint("[in the baseline]", color.Faint)
	}
	head := position(f) + "  " + sev + "  " + f.Rule
	plain := len(position(f)) + len(f.Severity.String()) + len(f.Rule) + 6 + len(msg)
	if tw.opts.Width > 0 && plain > tw.opts.Width && !strings.Contains(msg, "\n") {
		// Too long for the terminal: the message on lines of its own,
		// indented, broken between words.
		tw.bw.WriteString(head + "\n" + wrap(msg, tw.opts.Width-4, "    ") + "\n")
		return
	}
	tw.bw.WriteString(head + "  " + msg + "\n")
}

// writeClosing writes the lines after the findings: the inputs, the
// catalog's CRDs used, what kiln fix can repair, the assumed levels, the
// baseline's fixed findings and the summary.
func (tw *textWriter) writeClosing(res *rules.Result) {
	bw := tw.bw
	if !tw.first {
		bw.WriteString("\n")
	}
	writeInputsText(bw, tw.opts.Inputs)
	if len(res.Catalog) > 0 {
		bw.WriteString("catalog: " + strings.Join(res.Catalog, ", ") + " (CRDs not in the input, from kiln's catalog: kiln crds list)\n")
	}
	if tw.fixable > 0 {
		// As ruff and eslint say what their --fix would do.
		bw.WriteString(plural.Count(tw.fixable, "finding") + " kiln fix can repair (kiln fix --dry-run shows the changes)\n")
	}
	if n := res.Summary.Assumed; n > 0 {
		bw.WriteString(assumedLine(n, tw.assumed) + "\n")
	}
	if note := FixedNote(tw.opts.Inputs.BaselineFixed); note != "" {
		bw.WriteString(note + "\n")
	}
	bw.WriteString(summaryLine(res.Summary, tw.opts.Inputs) + "\n")
}

// assumedLine says how many findings were judged at an assumed Pod
// Security level, in which namespaces, and how to set their levels.
func assumedLine(n int, namespaces map[string]bool) string {
	names := slices.Sorted(maps.Keys(namespaces))
	const most = 5
	if len(names) > most {
		names = append(names[:most], strconv.Itoa(len(names)-most)+" more")
	}
	was := " were"
	if n == 1 {
		was = " was"
	}
	return plural.Count(n, "finding") + was + " judged at an assumed Pod Security level for namespaces not in the input (" + strings.Join(names, ", ") +
		"): declare them with pod-security.kubernetes.io labels or set psa.namespaces.<name> in .kiln.yaml (--psa-level sets the assumed level)"
}

// groupByObject keeps the findings of each file together and, within a
// file, those of one object together (objects in the order their first
// finding comes), so that each object is named once.
func groupByObject(fs []rules.Finding) []rules.Finding {
	out := make([]rules.Finding, 0, len(fs))
	for i := 0; i < len(fs); {
		j := i
		for j < len(fs) && fs[j].Pos.File == fs[i].Pos.File {
			j++
		}
		var order []manifest.Ref
		by := map[manifest.Ref][]rules.Finding{}
		for _, f := range fs[i:j] {
			if _, ok := by[f.Object]; !ok {
				order = append(order, f.Object)
			}
			by[f.Object] = append(by[f.Object], f)
		}
		for _, r := range order {
			out = append(out, by[r]...)
		}
		i = j
	}
	return out
}

// writeInputsText says in a line each what was rendered, what was skipped
// and why (every skipped file with ListSkipped), and the config used.
func writeInputsText(bw *bufio.Writer, in Inputs) {
	for _, line := range inputLines(in, true) {
		bw.WriteString(line + "\n")
	}
}

// inputLines says what was rendered, what was skipped (counted by reason;
// for the text format, each file with ListSkipped, else how to list them),
// what was read for context and the config.
func inputLines(in Inputs, text bool) []string {
	var lines []string
	switch {
	case in.FluxKustomizations > 0 && in.ArgoCDApplications > 0:
		lines = append(lines, "rendered "+plural.Count(in.Charts, "Helm chart")+", "+plural.Count(in.Kustomizations, "kustomization")+", "+plural.Count(in.FluxKustomizations, "Flux Kustomization")+" and "+plural.Count(in.ArgoCDApplications, "Argo CD Application source"))
	case in.FluxKustomizations > 0:
		lines = append(lines, "rendered "+plural.Count(in.Charts, "Helm chart")+", "+plural.Count(in.Kustomizations, "kustomization")+" and "+plural.Count(in.FluxKustomizations, "Flux Kustomization"))
	case in.ArgoCDApplications > 0:
		lines = append(lines, "rendered "+plural.Count(in.Charts, "Helm chart")+", "+plural.Count(in.Kustomizations, "kustomization")+" and "+plural.Count(in.ArgoCDApplications, "Argo CD Application source"))
	case in.Charts+in.Kustomizations > 0:
		lines = append(lines, "rendered "+plural.Count(in.Charts, "Helm chart")+" and "+plural.Count(in.Kustomizations, "kustomization"))
	}
	if n := len(in.Skipped); n > 0 {
		reasons := map[string]int{}
		var order []string
		for _, s := range in.Skipped {
			if reasons[s.Reason] == 0 {
				order = append(order, s.Reason)
			}
			reasons[s.Reason]++
		}
		sort.Strings(order)
		parts := make([]string, len(order))
		for i, r := range order {
			parts[i] = strconv.Itoa(reasons[r]) + " " + r
		}
		line := "skipped " + plural.Count(n, "file") + " not linted: " + strings.Join(parts, "; ")
		if text && !in.ListSkipped {
			line += " (--list-skipped lists them)"
		}
		lines = append(lines, line)
		if text && in.ListSkipped {
			for _, s := range in.Skipped {
				line := "  " + s.Pos.String() + "  " + s.Reason
				if s.Detail != "" {
					line += ": " + s.Detail
				}
				lines = append(lines, line)
			}
		}
	}
	if in.ContextFiles > 0 {
		lines = append(lines, "context: Namespaces, policies, params, CRDs and StorageClasses of "+plural.Count(in.ContextFiles, "other file")+" of the repository (--repo-context)")
	}
	if in.Config != "" {
		lines = append(lines, "config: "+in.Config)
	}
	return lines
}

// indentLines keeps a multi-line message readable under its finding line.
// wrap breaks s between words into lines of at most width characters (a
// longer word stays whole), each starting with indent.
func wrap(s string, width int, indent string) string {
	width = max(width, 20)
	var b strings.Builder
	line := 0
	for _, word := range strings.Fields(s) {
		switch {
		case line == 0:
			b.WriteString(indent)
		case line+1+len(word) > width:
			b.WriteString("\n" + indent)
			line = 0
		default:
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

func indentLines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "\n    ")
}
