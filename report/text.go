package report

import (
	"fmt"
	"io"

	"github.com/fatih/color"
	"github.com/kilnhq/kiln/rules"
)

func writeText(w io.Writer, res *rules.Result, opts Options) error {
	paint := func(c *color.Color, s string) string {
		if !opts.Color {
			return s
		}
		c.EnableColor()
		return c.Sprint(s)
	}
	sevColor := map[rules.Severity]*color.Color{
		rules.Error:   color.New(color.FgRed, color.Bold),
		rules.Warning: color.New(color.FgYellow),
		rules.Info:    color.New(color.FgCyan),
	}
	file := "\x00"
	for _, f := range res.Findings {
		if f.Suppressed != nil && !opts.ShowSuppressed {
			continue
		}
		if f.Pos.File != file {
			if file != "\x00" {
				fmt.Fprintln(w)
			}
			file = f.Pos.File
			fmt.Fprintln(w, paint(color.New(color.Bold), file))
		}
		msg := f.Message
		if f.Suppressed != nil {
			msg += " (suppressed by " + f.Suppressed.Kind
			if f.Suppressed.Reason != "" {
				msg += ": " + f.Suppressed.Reason
			}
			msg += ")"
		}
		fmt.Fprintf(w, "%s:%d:%d  %s  %s  %s\n", f.Pos.File, f.Pos.Line, f.Pos.Column,
			paint(sevColor[f.Severity], f.Severity.String()), f.Rule, msg)
	}
	if file != "\x00" {
		fmt.Fprintln(w)
	}
	s := res.Summary
	_, err := fmt.Fprintf(w, "%d files, %d objects: %d errors, %d warnings, %d infos, %d suppressed\n",
		s.Files, s.Objects, s.Errors, s.Warnings, s.Infos, s.Suppressed)
	return err
}
