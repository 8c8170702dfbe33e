// Package report renders lint results: text for people, JSON (a stable
// contract), SARIF 2.1.0 for code scanning, JUnit XML for CI dashboards and
// GitHub workflow commands for annotations.
//
// Every format is deterministic: it follows the engine's order of findings
// (file, line, column, rule) and of files (input order).
package report

import (
	"fmt"
	"io"

	"github.com/kilnhq/kiln/rules"
)

// Formats are the names accepted by --format.
var Formats = []string{"text", "json", "sarif", "junit", "github"}

// Options tune rendering.
type Options struct {
	// Color enables ANSI colour in the text format. The caller decides
	// (terminal, NO_COLOR, --no-color); the report never looks at the environment.
	Color bool
	// ShowSuppressed lists suppressed findings, with their reasons, in the text format.
	ShowSuppressed bool
	// ToolVersion is kiln's version, for formats that name the tool.
	ToolVersion string
}

// Write renders res in the named format.
func Write(w io.Writer, format string, res *rules.Result, opts Options) error {
	if res == nil {
		res = &rules.Result{}
	}
	switch format {
	case "text":
		return writeText(w, res, opts)
	case "json":
		return writeJSON(w, res)
	case "sarif":
		return writeSARIF(w, res, opts)
	case "junit":
		return writeJUnit(w, res)
	case "github":
		return writeGitHub(w, res)
	}
	return fmt.Errorf("unknown format %q: use one of text, json, sarif, junit, github", format)
}

// position formats where a finding is, omitting what is unknown; a finding
// with no file at all is "-".
func position(f rules.Finding) string {
	if f.Pos.File == "" && f.Pos.Line == 0 {
		return "-"
	}
	return f.Pos.String()
}

// plural returns "1 error", "2 errors".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// summaryLine is the one-line summary the text and github formats end with.
func summaryLine(s rules.Summary) string {
	return fmt.Sprintf("%s, %s: %s, %s, %s, %d suppressed",
		plural(s.Files, "file"), plural(s.Objects, "object"),
		plural(s.Errors, "error"), plural(s.Warnings, "warning"), plural(s.Infos, "info"), s.Suppressed)
}

// suppressionNote describes why a finding is suppressed: "suppressed by annotation: reason".
func suppressionNote(s *rules.Suppression) string {
	note := "suppressed by " + s.Kind
	if s.Reason != "" {
		note += ": " + s.Reason
	}
	return note
}
