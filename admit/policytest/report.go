package policytest

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kilnhq/kiln/internal/plural"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
)

// Report is the outcome of kiln test over some paths.
type Report struct {
	// Files are the test files found.
	Files   []string
	Results []Result
	// Notes are the suites' notes (served versions, what kiln does not read).
	Notes []string
	// Warnings are what the API server would refuse in a suite that kiln
	// runs all the same (policies it refuses as written); kiln test
	// --strict fails on them. Each names its line.
	Warnings []string
	// Errors are broken test files (or inputs): each names its line.
	Errors []error
}

// RunPaths finds the test files under paths and runs each.
func RunPaths(paths []string, opts Options) *Report {
	files, errs := Find(paths)
	rep := &Report{Files: files, Errors: errs}
	if len(files) == 0 && len(errs) == 0 {
		where := strings.Join(paths, ", ")
		if where == "" {
			where = "."
		}
		rep.Errors = append(rep.Errors, fmt.Errorf("no test files under %s: kiln test reads kiln-test.yaml, *.kiln-test.yaml and kyverno-test.yaml", where))
	}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			rep.Errors = append(rep.Errors, err)
			continue
		}
		results, said, err := Run(s, opts)
		if err != nil {
			rep.Errors = append(rep.Errors, err)
			continue
		}
		rep.Results = append(rep.Results, results...)
		for _, n := range said.Notes {
			rep.Notes = append(rep.Notes, s.File+": "+n)
		}
		rep.Warnings = append(rep.Warnings, said.Warnings...)
	}
	return rep
}

// Counts returns how many cases passed, failed and could not be evaluated.
func (r *Report) Counts() (pass, fail, errs int) {
	for _, res := range r.Results {
		switch res.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			errs++
		}
	}
	return
}

// Passed reports whether every case passed (none failed or could not be
// evaluated) and every test file could be read.
func (r *Report) Passed() bool {
	_, fail, errs := r.Counts()
	return len(r.Errors) == 0 && fail+errs == 0
}

// Formats are the output formats of kiln test.
var Formats = []string{"text", "json", "junit", "github"}

// CheckFormat reports a format kiln test does not write.
func CheckFormat(format string) error {
	if !contains(Formats, format) {
		return fmt.Errorf("unknown format %q (use %s)", format, strings.Join(Formats, ", "))
	}
	return nil
}

// Write writes the report in a format (see Formats).
func Write(w io.Writer, format string, r *Report) error {
	switch format {
	case "text":
		return writeText(w, r)
	case "json":
		return writeJSON(w, r)
	case "junit":
		return writeJUnit(w, r)
	case "github":
		return writeGitHub(w, r)
	}
	return CheckFormat(format)
}

func (r *Report) summary() string {
	pass, fail, errs := r.Counts()
	s := fmt.Sprintf("%d passed, %d failed", pass, fail)
	if errs > 0 {
		s += fmt.Sprintf(", %d not evaluated", errs)
	}
	if len(r.Warnings) > 0 {
		s += ", " + plural.Count(len(r.Warnings), "warning")
	}
	if len(r.Errors) > 0 {
		s += ", " + plural.Count(len(r.Errors), "broken test file")
	}
	return s + " (" + plural.Count(len(r.Files), "test file") + ")"
}

func writeText(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	header := []string{"", "TEST", "POLICY", "OBJECT", "EXPECTED", "GOT", "MESSAGE"}
	rows := [][]string{header}
	for _, res := range r.Results {
		mark := map[Status]string{Pass: "ok", Fail: "FAIL", Error: "ERROR"}[res.Status]
		msg := res.Message
		if res.Note != "" {
			msg += " [note: " + res.Note + "]"
		}
		rows = append(rows, []string{mark, res.Test + ": " + res.Case, res.Policy, res.Object, res.Expected, res.Got, oneLine(msg)})
	}
	widths := make([]int, len(header))
	for _, row := range rows {
		for i, cell := range row[:len(row)-1] {
			widths[i] = max(widths[i], len(cell))
		}
	}
	if len(r.Results) > 0 {
		for _, row := range rows {
			for i, cell := range row[:len(row)-1] {
				bw.WriteString(cell + strings.Repeat(" ", widths[i]-len(cell)+2))
			}
			bw.WriteString(row[len(row)-1] + "\n")
		}
	}
	for _, res := range r.Results {
		if res.Status != Pass {
			fmt.Fprintf(bw, "%s: %s: %s\n", res.Pos, res.Case, oneLine(res.Message))
		}
	}
	for _, n := range r.Notes {
		bw.WriteString("note: " + n + "\n")
	}
	for _, w := range r.Warnings {
		bw.WriteString("warning: " + w + "\n")
	}
	for _, e := range r.Errors {
		bw.WriteString("error: " + e.Error() + "\n")
	}
	bw.WriteString("kiln test: " + r.summary() + "\n")
	return bw.Flush()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

type jsonResult struct {
	Test     string `json:"test"`
	Case     string `json:"case"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Policy   string `json:"policy,omitempty"`
	Object   string `json:"object,omitempty"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
	Status   Status `json:"status"`
	Message  string `json:"message,omitempty"`
	Note     string `json:"note,omitempty"`
}

func writeJSON(w io.Writer, r *Report) error {
	pass, fail, errs := r.Counts()
	out := struct {
		Version  int            `json:"version"`
		Results  []jsonResult   `json:"results"`
		Notes    []string       `json:"notes"`
		Warnings []string       `json:"warnings,omitempty"`
		Errors   []string       `json:"errors"`
		Summary  map[string]int `json:"summary"`
	}{Version: 1, Results: []jsonResult{}, Notes: append([]string{}, r.Notes...), Warnings: r.Warnings, Errors: []string{},
		Summary: map[string]int{"files": len(r.Files), "passed": pass, "failed": fail, "notEvaluated": errs, "brokenFiles": len(r.Errors)}}
	for _, res := range r.Results {
		out.Results = append(out.Results, jsonResult{Test: res.Test, Case: res.Case, File: res.Pos.File, Line: res.Pos.Line, Column: res.Pos.Column,
			Policy: res.Policy, Object: res.Object, Expected: res.Expected, Got: res.Got, Status: res.Status, Message: res.Message, Note: res.Note})
	}
	for _, e := range r.Errors {
		out.Errors = append(out.Errors, e.Error())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeJUnit(w io.Writer, r *Report) error {
	out := report.JUnitSuites{}
	index := map[string]int{}
	suite := func(name string) *report.JUnitSuite {
		i, ok := index[name]
		if !ok {
			i = len(out.Suites)
			index[name] = i
			out.Suites = append(out.Suites, report.JUnitSuite{Name: name})
		}
		return &out.Suites[i]
	}
	for _, res := range r.Results {
		s := suite(res.File)
		c := report.JUnitCase{Name: res.Case, Classname: res.Test, File: res.Pos.File, Line: res.Pos.Line, SystemOut: res.Message}
		text := fmt.Sprintf("%s: expected %s, got %s: %s", res.Pos, res.Expected, res.Got, res.Message)
		switch res.Status {
		case Fail:
			c.Failures = []report.JUnitProblem{{Message: res.Message, Body: text}}
			s.Failures++
			out.Failures++
		case Error:
			c.Errors = []report.JUnitProblem{{Message: res.Message, Body: text}}
			s.Errors++
			out.Errors++
		}
		s.Tests++
		out.Tests++
		s.Cases = append(s.Cases, c)
	}
	for _, e := range r.Errors {
		pos := errorPos(e)
		s := suite(pos.File)
		s.Cases = append(s.Cases, report.JUnitCase{Name: "test file", Classname: pos.File, File: pos.File, Line: pos.Line, Errors: []report.JUnitProblem{{Message: e.Error(), Body: e.Error()}}})
		s.Tests++
		s.Errors++
		out.Tests++
		out.Errors++
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func errorPos(err error) manifest.Position {
	if fe, ok := err.(*FileError); ok {
		return fe.Pos
	}
	return manifest.Position{}
}

// writeGitHub writes a workflow command per failed case and broken file
// (report's escaping), then the summary.
func writeGitHub(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	for _, res := range r.Results {
		if res.Status == Pass {
			continue
		}
		bw.WriteString(report.GitHubCommand(rules.Finding{Rule: "kiln-test/" + res.Test, Severity: rules.Error, Pos: res.Pos,
			Message: fmt.Sprintf("%s: expected %s, got %s: %s", res.Case, res.Expected, res.Got, res.Message)}) + "\n")
	}
	for _, e := range r.Errors {
		pos := errorPos(e)
		msg := e.Error()
		if fe, ok := e.(*FileError); ok {
			msg = fe.Msg
		}
		bw.WriteString(report.GitHubCommand(rules.Finding{Rule: "kiln-test/input", Severity: rules.Error, Pos: pos, Message: msg}) + "\n")
	}
	for _, n := range r.Notes {
		bw.WriteString(report.GitHubCommand(rules.Finding{Rule: "kiln-test/note", Severity: rules.Info, Message: n}) + "\n")
	}
	for _, w := range r.Warnings {
		bw.WriteString(report.GitHubCommand(rules.Finding{Rule: "kiln-test/warning", Severity: rules.Warning, Message: w}) + "\n")
	}
	bw.WriteString("kiln test: " + r.summary() + "\n")
	return bw.Flush()
}
