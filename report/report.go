// Package report renders lint results: text for people, JSON (a stable
// contract), SARIF 2.1.0 for code scanning, JUnit XML for CI dashboards and
// GitHub workflow commands for annotations.
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
	// Color enables ANSI colour in the text format.
	Color bool
	// ShowSuppressed lists suppressed findings in the text format.
	ShowSuppressed bool
	// ToolVersion is kiln's version, for formats that name the tool.
	ToolVersion string
}

// Write renders res in the named format.
func Write(w io.Writer, format string, res *rules.Result, opts Options) error {
	switch format {
	case "text":
		return writeText(w, res, opts)
	case "json":
		return writeJSON(w, res)
	}
	return fmt.Errorf("unknown format %q: use one of text, json, sarif, junit, github", format)
}
