// Package report renders lint results: text for people, JSON (a stable
// contract), SARIF 2.1.0 for code scanning, JUnit XML for CI dashboards,
// GitHub workflow commands for annotations, a Markdown summary for CI job
// summaries and pull-request comments, and one self-contained HTML page.
//
// Every format is deterministic: it follows the engine's order of findings
// (file, line, column, rule) and of files (input order).
package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/internal/plural"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Formats are the names accepted by --format.
var Formats = []string{"text", "json", "sarif", "junit", "github", "markdown", "html"}

// CheckFormat refuses a --format that no report writes.
func CheckFormat(format string) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("--format %q: use one of %s", format, strings.Join(Formats, ", "))
	}
	return nil
}

// Options tune rendering.
type Options struct {
	// Color enables ANSI colour in the text format. The caller decides
	// (terminal, NO_COLOR, --no-color); the report never looks at the environment.
	Color bool
	// ShowSuppressed lists suppressed findings, with their reasons, in the text format.
	ShowSuppressed bool
	// Width wraps long findings of the text format at this many columns
	// (the terminal's width); 0 never wraps.
	Width int
	// ToolVersion is kiln's version, for formats that name the tool.
	ToolVersion string
	// Inputs is what the run read beside its findings.
	Inputs Inputs
	// OpenSource opens a file findings point at, for the source lines the
	// html format shows around each; nil opens it on the file system
	// (relative paths from the working directory, as kiln names them).
	OpenSource func(name string) (io.ReadCloser, error)
}

// Inputs describes a run's inputs: the problems reading them (each format
// reports them, so that a broken input never looks like a clean run), what
// was skipped as not Kubernetes, what was rendered, and the config used.
type Inputs struct {
	// Errors are input errors (usually *manifest.Error, with a position).
	Errors []error
	// Warnings are problems that skipped something without failing the run.
	Warnings []error
	// Skipped are the files (or kustomizations, charts) not linted, with why.
	Skipped []manifest.Skipped
	// ListSkipped lists each skipped file in the text format.
	ListSkipped bool
	// Charts and Kustomizations count what was rendered, FluxKustomizations
	// the Flux Kustomizations built, ArgoCDApplications the Argo CD
	// Application sources rendered.
	Charts, Kustomizations, FluxKustomizations, ArgoCDApplications int
	// Config is the config file used ("" for none).
	Config string
	// ContextFiles counts the other files of the repository read for
	// context only (kiln lint of some files: pre-commit).
	ContextFiles int
	// Baseline names what the findings were compared with (a baseline
	// file, a Git revision), "" for nothing: the formats then mark each
	// finding new or baselined (rules.Finding.Baselined, existing there).
	Baseline string
	// BaselineFixed counts the baseline file's entries that no finding
	// matched any more: fixed since it was written.
	BaselineFixed int
	// Shard is the part of the objects the run judged ("2/4"; "" for all).
	Shard string
	// NotFixed are the files kiln fix edits nothing in (a chart's
	// templates, JSON files): the repairs their findings carry are not
	// counted among those kiln fix can make.
	NotFixed map[string]bool
}

// fixable reports whether kiln fix makes the repair a finding carries.
func (in Inputs) fixable(f rules.Finding) bool {
	return f.Fix != nil && f.Suppressed == nil && !f.Baselined && !in.NotFixed[f.Pos.File]
}

// inputError is an input error's position and message, split.
type inputError struct {
	Pos manifest.Position
	Msg string
}

func (in Inputs) errors() []inputError {
	out := make([]inputError, 0, len(in.Errors))
	for _, err := range in.Errors {
		if e, ok := err.(*manifest.Error); ok {
			out = append(out, inputError{Pos: e.Pos, Msg: e.Msg})
			continue
		}
		out = append(out, inputError{Msg: err.Error()})
	}
	return out
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
		return writeJSON(w, res, opts.Inputs)
	case "sarif":
		return writeSARIF(w, res, opts)
	case "junit":
		return writeJUnit(w, res, opts.Inputs)
	case "github":
		return writeGitHub(w, res, opts.Inputs)
	case "markdown":
		return writeMarkdown(w, res, opts.Inputs)
	case "html":
		return writeHTML(w, res, opts)
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// position formats where a finding is, omitting what is unknown; a finding
// with no file at all is "-".
func position(f rules.Finding) string {
	if f.Pos.File == "" && f.Pos.Line == 0 {
		return "-"
	}
	return f.Pos.String()
}

// summaryLine is the one-line summary the text and github formats end with:
// input errors first (they make the run fail whatever the findings), then
// files and objects, then findings.
func summaryLine(s rules.Summary, in Inputs) string {
	line := fmt.Sprintf("%s, %s: %s, %s, %s, %d suppressed",
		plural.Count(s.Files, "file"), plural.Count(s.Objects, "object"),
		plural.Count(s.Errors, "error"), plural.Count(s.Warnings, "warning"), plural.Count(s.Infos, "info"), s.Suppressed)
	if in.Baseline != "" {
		line += fmt.Sprintf(", %d baselined", s.Baselined)
	}
	if n := len(in.Errors); n > 0 {
		line = plural.Count(n, "input error") + "; " + line
	}
	return line
}

// FixedNote is what a run says of the baseline entries no finding matches
// any more ("" for none).
func FixedNote(n int) string {
	if n == 0 {
		return ""
	}
	verb := "entries are"
	if n == 1 {
		verb = "entry is"
	}
	return fmt.Sprintf("%d baseline %s fixed: run kiln lint --write-baseline to drop them", n, verb)
}

// baselineState is a finding's state against the run's baseline, as SARIF
// names it: "unchanged" (in the baseline), "new", or "" without one.
func baselineState(f rules.Finding, in Inputs) string {
	switch {
	case in.Baseline == "" || f.Suppressed != nil:
		return ""
	case f.Baselined:
		return "unchanged"
	}
	return "new"
}

// suppressionNote describes why a finding is suppressed: "suppressed by annotation: reason".
func suppressionNote(s *rules.Suppression) string {
	note := "suppressed by " + s.Kind
	if s.Reason != "" {
		note += ": " + s.Reason
	}
	return note
}
