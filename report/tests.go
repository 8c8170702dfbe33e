package report

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/internal/plural"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// TestRun is the outcome of kiln test: the cases of the policy test files
// found, with what their suites said besides.
type TestRun struct {
	// Files are the test files found.
	Files []string
	Cases []TestCase
	// Notes are the suites' notes (served versions, what kiln does not read).
	Notes []string
	// Warnings are what the API server would refuse in a suite that kiln
	// runs all the same (policies it refuses as written); kiln test
	// --strict fails on them. Each names its line.
	Warnings []string
	// Errors are broken test files (or inputs): each names its line (a
	// *manifest.Error names it apart from its message).
	Errors []error
}

// TestStatus is how a case ended.
type TestStatus string

// The statuses of a case.
const (
	TestPass TestStatus = "pass"
	TestFail TestStatus = "fail"
	// TestError: kiln could not evaluate the case (it counts as a failure).
	TestError TestStatus = "error"
)

// TestCase is one case's row.
type TestCase struct {
	Test     string
	File     string
	Case     string
	Pos      manifest.Position
	Policy   string
	Object   string
	Expected string
	Got      string
	// Message is the server's answer on a pass, why the case failed
	// otherwise.
	Message string
	Status  TestStatus
	// Note is what the case's line says besides (Kyverno differences).
	Note string
}

// Counts returns how many cases passed, failed and could not be evaluated.
func (r *TestRun) Counts() (pass, fail, errs int) {
	for _, res := range r.Cases {
		switch res.Status {
		case TestPass:
			pass++
		case TestFail:
			fail++
		default:
			errs++
		}
	}
	return
}

// Passed reports whether every case passed (none failed or could not be
// evaluated) and every test file could be read.
func (r *TestRun) Passed() bool {
	_, fail, errs := r.Counts()
	return len(r.Errors) == 0 && fail+errs == 0
}

// TestFormats are the output formats of kiln test.
var TestFormats = []string{"text", "json", "junit", "github"}

// CheckTestFormat reports a format kiln test does not write.
func CheckTestFormat(format string) error {
	if !slices.Contains(TestFormats, format) {
		return fmt.Errorf("unknown format %q (use %s)", format, strings.Join(TestFormats, ", "))
	}
	return nil
}

// WriteTests writes a test run in a format (see TestFormats).
func WriteTests(w io.Writer, format string, r *TestRun) error {
	switch format {
	case "text":
		return writeTestText(w, r)
	case "json":
		return writeTestJSON(w, r)
	case "junit":
		return writeTestJUnit(w, r)
	case "github":
		return writeTestGitHub(w, r)
	}
	return CheckTestFormat(format)
}

func (r *TestRun) summary() string {
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

func writeTestText(w io.Writer, r *TestRun) error {
	bw := bufio.NewWriter(w)
	header := []string{"", "TEST", "POLICY", "OBJECT", "EXPECTED", "GOT", "MESSAGE"}
	rows := [][]string{header}
	for _, res := range r.Cases {
		mark := map[TestStatus]string{TestPass: "ok", TestFail: "FAIL", TestError: "ERROR"}[res.Status]
		msg := res.Message
		if res.Note != "" {
			msg += " [note: " + res.Note + "]"
		}
		rows = append(rows, []string{mark, res.Test + ": " + res.Case, res.Policy, res.Object, res.Expected, res.Got, testLine(msg)})
	}
	widths := make([]int, len(header))
	for _, row := range rows {
		for i, cell := range row[:len(row)-1] {
			widths[i] = max(widths[i], len(cell))
		}
	}
	if len(r.Cases) > 0 {
		for _, row := range rows {
			for i, cell := range row[:len(row)-1] {
				bw.WriteString(cell + strings.Repeat(" ", widths[i]-len(cell)+2))
			}
			bw.WriteString(row[len(row)-1] + "\n")
		}
	}
	for _, res := range r.Cases {
		if res.Status != TestPass {
			fmt.Fprintf(bw, "%s: %s: %s\n", res.Pos, res.Case, testLine(res.Message))
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

func testLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

type jsonTestCase struct {
	Test     string     `json:"test"`
	Case     string     `json:"case"`
	File     string     `json:"file"`
	Line     int        `json:"line"`
	Column   int        `json:"column"`
	Policy   string     `json:"policy,omitempty"`
	Object   string     `json:"object,omitempty"`
	Expected string     `json:"expected"`
	Got      string     `json:"got"`
	Status   TestStatus `json:"status"`
	Message  string     `json:"message,omitempty"`
	Note     string     `json:"note,omitempty"`
}

func writeTestJSON(w io.Writer, r *TestRun) error {
	pass, fail, errs := r.Counts()
	out := struct {
		Version  int            `json:"version"`
		Results  []jsonTestCase `json:"results"`
		Notes    []string       `json:"notes"`
		Warnings []string       `json:"warnings,omitempty"`
		Errors   []string       `json:"errors"`
		Summary  map[string]int `json:"summary"`
	}{Version: 1, Results: []jsonTestCase{}, Notes: append([]string{}, r.Notes...), Warnings: r.Warnings, Errors: []string{},
		Summary: map[string]int{"files": len(r.Files), "passed": pass, "failed": fail, "notEvaluated": errs, "brokenFiles": len(r.Errors)}}
	for _, res := range r.Cases {
		out.Results = append(out.Results, jsonTestCase{Test: res.Test, Case: res.Case, File: res.Pos.File, Line: res.Pos.Line, Column: res.Pos.Column,
			Policy: res.Policy, Object: res.Object, Expected: res.Expected, Got: res.Got, Status: res.Status, Message: res.Message, Note: res.Note})
	}
	for _, e := range r.Errors {
		out.Errors = append(out.Errors, e.Error())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeTestJUnit(w io.Writer, r *TestRun) error {
	out := JUnitSuites{}
	index := map[string]int{}
	suite := func(name string) *JUnitSuite {
		i, ok := index[name]
		if !ok {
			i = len(out.Suites)
			index[name] = i
			out.Suites = append(out.Suites, JUnitSuite{Name: name})
		}
		return &out.Suites[i]
	}
	for _, res := range r.Cases {
		s := suite(res.File)
		c := JUnitCase{Name: res.Case, Classname: res.Test, File: res.Pos.File, Line: res.Pos.Line, SystemOut: res.Message}
		text := fmt.Sprintf("%s: expected %s, got %s: %s", res.Pos, res.Expected, res.Got, res.Message)
		switch res.Status {
		case TestFail:
			c.Failures = []JUnitProblem{{Message: res.Message, Body: text}}
			s.Failures++
			out.Failures++
		case TestError:
			c.Errors = []JUnitProblem{{Message: res.Message, Body: text}}
			s.Errors++
			out.Errors++
		}
		s.Tests++
		out.Tests++
		s.Cases = append(s.Cases, c)
	}
	for _, e := range r.Errors {
		pos := testErrorPos(e)
		s := suite(pos.File)
		s.Cases = append(s.Cases, JUnitCase{Name: "test file", Classname: pos.File, File: pos.File, Line: pos.Line, Errors: []JUnitProblem{{Message: e.Error(), Body: e.Error()}}})
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

func testErrorPos(err error) manifest.Position {
	if fe, ok := err.(*manifest.Error); ok {
		return fe.Pos
	}
	return manifest.Position{}
}

// writeTestGitHub writes a workflow command per failed case and broken file
// (report's escaping), then the summary.
func writeTestGitHub(w io.Writer, r *TestRun) error {
	bw := bufio.NewWriter(w)
	for _, res := range r.Cases {
		if res.Status == TestPass {
			continue
		}
		bw.WriteString(githubCommand(rules.Finding{Rule: "kiln-test/" + res.Test, Severity: rules.Error, Pos: res.Pos,
			Message: fmt.Sprintf("%s: expected %s, got %s: %s", res.Case, res.Expected, res.Got, res.Message)}) + "\n")
	}
	for _, e := range r.Errors {
		pos := testErrorPos(e)
		msg := e.Error()
		if fe, ok := e.(*manifest.Error); ok {
			msg = fe.Msg
		}
		bw.WriteString(githubCommand(rules.Finding{Rule: "kiln-test/input", Severity: rules.Error, Pos: pos, Message: msg}) + "\n")
	}
	for _, n := range r.Notes {
		bw.WriteString(githubCommand(rules.Finding{Rule: "kiln-test/note", Severity: rules.Info, Message: n}) + "\n")
	}
	for _, w := range r.Warnings {
		bw.WriteString(githubCommand(rules.Finding{Rule: "kiln-test/warning", Severity: rules.Warning, Message: w}) + "\n")
	}
	bw.WriteString("kiln test: " + r.summary() + "\n")
	return bw.Flush()
}
