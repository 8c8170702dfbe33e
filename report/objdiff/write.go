package objdiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"
)

// Formats are the formats Write writes.
var Formats = []string{"text", "markdown", "json"}

// CommentLimit is the most characters GitHub takes in a pull request
// comment.
const CommentLimit = 65536

// Options are how a report is written.
type Options struct {
	// Color colours the text format.
	Color bool
	// Context is how many unchanged lines are shown around each changed
	// line of a multi-line value (a config file in a ConfigMap).
	Context int
	// Limit is the most characters of the Markdown format (0: no limit):
	// the apps that do not fit are cut, and the cut said.
	Limit int
}

// Write writes the report in the format. An empty report writes nothing
// in text and Markdown.
func Write(w io.Writer, format string, r *Report, o Options) error {
	switch format {
	case "text":
		if r.Empty() {
			return nil
		}
		_, err := io.WriteString(w, text(r, o))
		return err
	case "markdown":
		if r.Empty() {
			return nil
		}
		_, err := io.WriteString(w, markdown(r, o))
		return err
	case "json":
		out := struct {
			*Report
			Summary []summaryRow `json:"summary"`
		}{r, summary(r)}
		if out.Apps == nil {
			out.Apps = []App{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	return fmt.Errorf("unknown format %q: use %s", format, strings.Join(Formats, ", "))
}

// summaryRow is an app's line in the summary.
type summaryRow struct {
	App        string `json:"app"`
	Added      int    `json:"added"`
	Removed    int    `json:"removed"`
	Changed    int    `json:"changed"`
	Introduced int    `json:"introduced"`
	Fixed      int    `json:"fixed"`
	Verdict    string `json:"verdict"`
}

func summary(r *Report) []summaryRow {
	rows := []summaryRow{}
	for i := range r.Apps {
		a := &r.Apps[i]
		c := a.Count()
		rows = append(rows, summaryRow{a.Name, c.Added, c.Removed, c.Changed, total(c.Introduced), total(c.Fixed), a.Verdict()})
	}
	return rows
}

// line is one line of an app's diff: its mark ('+' added, '-' removed,
// '~' an object changed, '!' a finding, ' ' else), its depth and text.
type line struct {
	mark  byte
	depth int
	text  string
}

// appLines are the lines of an app's diff.
func appLines(a *App, o Options) []line {
	var out []line
	for _, obj := range a.Objects {
		mark := map[Op]byte{Added: '+', Removed: '-', Changed: '~', Unchanged: ' '}[obj.Op]
		head := obj.ref()
		if obj.Op == Unchanged {
			head += " (unchanged; judged differently)"
		}
		out = append(out, line{mark, 0, head})
		for _, c := range obj.Changes {
			out = append(out, line{' ', 1, c.Path})
			switch c.Op {
			case Removed:
				out = append(out, valueLines('-', c.Old)...)
			case Added:
				out = append(out, valueLines('+', c.New)...)
			default:
				out = append(out, changedLines(c.Old, c.New, o.Context)...)
			}
		}
		for _, f := range obj.Introduced {
			out = append(out, line{'!', 1, "new " + findingText(f)})
		}
		for _, f := range obj.Fixed {
			out = append(out, line{' ', 1, "fixed " + findingText(f)})
		}
	}
	return out
}

func findingText(f Finding) string {
	s := f.Severity + " " + f.Rule
	if f.Field != "" {
		s += " (" + f.Field + ")"
	}
	return s + ": " + f.Message
}

// valueLines are a value added or removed: a scalar on its line, a map or
// list as YAML.
func valueLines(mark byte, v any) []line {
	var out []line
	for _, l := range yamlLines(v) {
		out = append(out, line{mark, 2, l})
	}
	return out
}

func yamlLines(v any) []string {
	if s, ok := v.(string); ok && !strings.Contains(s, "\n") {
		return []string{s}
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return []string{fmt.Sprint(v)}
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// changedLines are a value changed: old and new, or for two multi-line
// strings the lines that differ with context lines around them.
func changedLines(old, new any, context int) []line {
	os, ok1 := old.(string)
	ns, ok2 := new.(string)
	if !ok1 || !ok2 || !strings.Contains(os, "\n") && !strings.Contains(ns, "\n") {
		return append(valueLines('-', old), valueLines('+', new)...)
	}
	a, b := difflib.SplitLines(os), difflib.SplitLines(ns)
	var out []line
	m := difflib.NewMatcher(a, b)
	for i, group := range m.GetGroupedOpCodes(context) {
		if i > 0 {
			out = append(out, line{' ', 2, "…"})
		}
		for _, c := range group {
			switch c.Tag {
			case 'e':
				for _, l := range a[c.I1:c.I2] {
					out = append(out, line{' ', 2, strings.TrimSuffix(l, "\n")})
				}
			default:
				for _, l := range a[c.I1:c.I2] {
					out = append(out, line{'-', 2, strings.TrimSuffix(l, "\n")})
				}
				for _, l := range b[c.J1:c.J2] {
					out = append(out, line{'+', 2, strings.TrimSuffix(l, "\n")})
				}
			}
		}
	}
	return out
}

// text is the text format: a heading line, then each app's lines.
func text(r *Report, o Options) string {
	var b strings.Builder
	bold := color.New(color.Bold)
	paint := map[byte]*color.Color{'+': color.New(color.FgGreen), '-': color.New(color.FgRed), '~': color.New(color.FgYellow), '!': color.New(color.FgRed, color.Bold)}
	if !o.Color {
		bold.DisableColor()
		for _, c := range paint {
			c.DisableColor()
		}
	} else {
		bold.EnableColor()
		for _, c := range paint {
			c.EnableColor()
		}
	}
	fmt.Fprintf(&b, "kiln diff %s → %s: %s\n", r.Base, r.Head, appsDiffer(len(r.Apps)))
	for i := range r.Apps {
		a := &r.Apps[i]
		b.WriteString("\n")
		b.WriteString(bold.Sprint(a.Name) + " — " + a.Count().Changes() + "; " + a.Verdict() + "\n")
		for _, l := range appLines(a, o) {
			s := "  " + strings.Repeat("    ", l.depth) + string(l.mark) + " " + l.text
			if l.mark == ' ' {
				s = "  " + strings.Repeat("    ", l.depth) + "  " + l.text
			}
			if c := paint[l.mark]; c != nil {
				s = c.Sprint(s)
			}
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

// markdown is the Markdown format: a summary table, then one collapsible
// section per app, cut at o.Limit characters with the cut said. Each app's
// lines are a diff code block: an object changed is an "@@" line (as a
// hunk's head), values and objects added and removed "+" and "-" lines, a
// new finding a "!" line.
func markdown(r *Report, o Options) string {
	var head strings.Builder
	fmt.Fprintf(&head, "### kiln diff: %s → %s\n\n", mdCode(r.Base), mdCode(r.Head))
	head.WriteString("| app | added | removed | changed | new findings | fixed | verdict |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
	var rows []string
	for _, s := range summary(r) {
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %s |\n", mdCell(s.App), s.Added, s.Removed, s.Changed, s.Introduced, s.Fixed, mdCell(s.Verdict)))
	}
	sections := make([]string, len(r.Apps))
	for i := range r.Apps {
		a := &r.Apps[i]
		var b strings.Builder
		fmt.Fprintf(&b, "\n<details><summary><b>%s</b>: %s; %s</summary>\n\n````diff\n", htmlEscape(a.Name), a.Count().Changes(), htmlEscape(a.Verdict()))
		for _, l := range appLines(a, o) {
			if l.mark == '~' || l.mark == ' ' && l.depth == 0 {
				b.WriteString("@@ " + l.text + " @@\n")
				continue
			}
			b.WriteString(string(l.mark) + " " + strings.Repeat("    ", l.depth) + l.text + "\n")
		}
		b.WriteString("````\n\n</details>\n")
		sections[i] = b.String()
	}
	cut := func(shown, rowsShown int) string {
		if shown == len(sections) && rowsShown == len(rows) {
			return ""
		}
		return fmt.Sprintf("\n_Cut to fit GitHub's comment limit: %d of %d apps shown in full; the whole diff is in the job summary (or run `kiln diff -f markdown` without a limit)._\n", shown, len(sections))
	}
	full := func(rowsShown, shown int) string {
		var b strings.Builder
		b.WriteString(head.String())
		for _, r := range rows[:rowsShown] {
			b.WriteString(r)
		}
		if rowsShown < len(rows) {
			fmt.Fprintf(&b, "| … %d more apps | | | | | | |\n", len(rows)-rowsShown)
		}
		for _, s := range sections[:shown] {
			b.WriteString(s)
		}
		b.WriteString(cut(shown, rowsShown))
		return b.String()
	}
	out := full(len(rows), len(sections))
	if o.Limit <= 0 || len(out) <= o.Limit {
		return out
	}
	rowsShown := len(rows)
	for rowsShown > 0 && len(full(rowsShown, 0)) > o.Limit {
		rowsShown--
	}
	shown := 0
	for shown < len(sections) && len(full(rowsShown, shown+1)) <= o.Limit {
		shown++
	}
	return full(rowsShown, shown)
}

func mdCode(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// appsDiffer is the headline's count of apps, with the verb agreeing: "1 app
// differs", "3 apps differ".
func appsDiffer(n int) string {
	if n == 1 {
		return "1 app differs"
	}
	return plural(n, "app") + " differ"
}
