package report

import (
	"bufio"
	"io"
	"strings"

	"github.com/fatih/color"
	"github.com/kilnhq/kiln/rules"
)

// writeText prints findings grouped by file: a header line per file, then
// `file:line:col  severity  rule  message` per finding, then a summary line.
// Suppressed findings are listed only with opts.ShowSuppressed.
func writeText(w io.Writer, res *rules.Result, opts Options) error {
	bw := bufio.NewWriter(w)
	paint := func(s string, attrs ...color.Attribute) string {
		if !opts.Color {
			return s
		}
		c := color.New(attrs...)
		c.EnableColor() // the caller decided; ignore fatih/color's own terminal detection
		return c.Sprint(s)
	}
	sevAttrs := map[rules.Severity][]color.Attribute{
		rules.Error:   {color.FgRed, color.Bold},
		rules.Warning: {color.FgYellow},
		rules.Info:    {color.FgCyan},
	}
	first := true
	file := ""
	for _, f := range res.Findings {
		if f.Suppressed != nil && !opts.ShowSuppressed {
			continue
		}
		if first || f.Pos.File != file {
			if !first {
				bw.WriteString("\n")
			}
			first = false
			file = f.Pos.File
			header := file
			if header == "" {
				header = "(no file)"
			}
			bw.WriteString(paint(header, color.Bold) + "\n")
		}
		sev := paint(f.Severity.String(), sevAttrs[f.Severity]...)
		msg := indentLines(f.Message)
		if f.Suppressed != nil {
			sev = paint(f.Severity.String(), color.Faint)
			msg += " " + paint("["+indentLines(suppressionNote(f.Suppressed))+"]", color.Faint)
		}
		bw.WriteString(position(f) + "  " + sev + "  " + f.Rule + "  " + msg + "\n")
	}
	if !first {
		bw.WriteString("\n")
	}
	bw.WriteString(summaryLine(res.Summary) + "\n")
	return bw.Flush()
}

// indentLines keeps a multi-line message readable under its finding line.
func indentLines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "\n    ")
}
