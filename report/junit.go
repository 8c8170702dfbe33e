package report

import (
	"encoding/xml"
	"io"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// JUnit XML as CI dashboards (Jenkins, GitLab, Azure) read it: one
// testsuite per input file, one testcase per object, one failure per
// error-level finding. A testcase fails when it has at least one failure,
// so tests − failures is the number of clean objects.
// JUnitSuites is the root of a JUnit XML report (kiln lint -f junit, kiln
// test -f junit).
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr,omitempty"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one testsuite: an input file.
type JUnitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []JUnitCase `xml:"testcase"`
}

// JUnitCase is one testcase, failed by any failure or error.
type JUnitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	File      string         `xml:"file,attr,omitempty"`
	Line      int            `xml:"line,attr,omitempty"`
	Errors    []JUnitProblem `xml:"error"`
	Failures  []JUnitProblem `xml:"failure"`
	SystemOut string         `xml:"system-out,omitempty"`
}

// JUnitProblem is a failure or an error of a testcase.
type JUnitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// junitBuilder collects testcases per file, keeping input order.
type junitBuilder struct {
	suites []*junitSuiteBuild
	byFile map[string]*junitSuiteBuild
}

type junitSuiteBuild struct {
	file  string
	whole *junitCaseBuild // findings about the file, not an object
	cases []*junitCaseBuild
	byRef map[manifest.Ref]*junitCaseBuild
}

type junitCaseBuild struct {
	name     string
	errors   []JUnitProblem
	failures []JUnitProblem
	out      []string
}

func (b *junitBuilder) suite(file string) *junitSuiteBuild {
	if s, ok := b.byFile[file]; ok {
		return s
	}
	s := &junitSuiteBuild{file: file, byRef: map[manifest.Ref]*junitCaseBuild{}}
	b.byFile[file] = s
	b.suites = append(b.suites, s)
	return s
}

func (s *junitSuiteBuild) object(ref manifest.Ref) *junitCaseBuild {
	if c, ok := s.byRef[ref]; ok {
		return c
	}
	c := &junitCaseBuild{name: ref.String()}
	s.byRef[ref] = c
	s.cases = append(s.cases, c)
	return c
}

// wholeFile returns the testcase of what is said about the file itself,
// not an object in it.
func (s *junitSuiteBuild) wholeFile() *junitCaseBuild {
	if s.whole == nil {
		s.whole = &junitCaseBuild{name: suiteName(s.file)}
	}
	return s.whole
}

// suiteName names the suite (and testcase class) of a file.
func suiteName(file string) string {
	if file == "" {
		return "(no file)"
	}
	return file
}

// writeJUnit renders every input file, including files without findings.
// A file that could not be read or rendered gets an errored testcase
// holding its input errors.
func writeJUnit(w io.Writer, res *rules.Result, in Inputs) error {
	b := &junitBuilder{byFile: map[string]*junitSuiteBuild{}}
	for _, e := range in.errors() {
		c := b.suite(e.Pos.File).wholeFile()
		c.errors = append(c.errors, JUnitProblem{Message: e.Msg, Type: "kiln/input", Body: (&manifest.Error{Pos: e.Pos, Msg: e.Msg}).Error()})
	}
	for _, fo := range res.Files {
		s := b.suite(fo.File)
		for _, ref := range fo.Objects {
			s.object(ref)
		}
	}
	err := res.Each(func(f rules.Finding) error {
		b.add(f)
		return nil
	})
	if err != nil {
		return err
	}
	return encodeJUnit(w, b.report())
}

// add files a finding under its object's testcase (or its file's): a
// failure when it is an active error, else a line of the testcase's
// output.
func (b *junitBuilder) add(f rules.Finding) {
	s := b.suite(f.Pos.File)
	var c *junitCaseBuild
	if f.Object == (manifest.Ref{}) {
		c = s.wholeFile()
	} else {
		c = s.object(f.Object)
	}
	line := junitLine(f)
	switch {
	case f.Suppressed != nil || f.Baselined:
		c.out = append(c.out, line)
	case f.Severity == rules.Error:
		c.failures = append(c.failures, JUnitProblem{Message: f.Message, Type: f.Rule, Body: line})
	default:
		c.out = append(c.out, line)
	}
}

// junitLine is a finding as the text format writes it, with its notes
// and its field on a line of its own.
func junitLine(f rules.Finding) string {
	line := position(f) + "  " + f.Severity.String() + "  " + f.Rule + "  " + f.Message
	if f.Suppressed != nil {
		line += " [" + suppressionNote(f.Suppressed) + "]"
	}
	if f.Baselined {
		line += " [in the baseline]"
	}
	if f.Field != "" {
		line += "\n    field: " + f.Field
	}
	return line
}

// report is the testsuites, in input order, with their counts added up.
func (b *junitBuilder) report() JUnitSuites {
	out := JUnitSuites{Name: "kiln", Suites: []JUnitSuite{}}
	for _, s := range b.suites {
		js := s.build()
		out.Tests += js.Tests
		out.Failures += js.Failures
		out.Errors += js.Errors
		out.Suites = append(out.Suites, js)
	}
	return out
}

// build is the file's testsuite: the file's own testcase first, then one
// per object, each counted as errored, failed or passed.
func (s *junitSuiteBuild) build() JUnitSuite {
	js := JUnitSuite{Name: suiteName(s.file), Cases: []JUnitCase{}}
	cases := s.cases
	if s.whole != nil {
		cases = append([]*junitCaseBuild{s.whole}, cases...)
	}
	for _, c := range cases {
		jc := JUnitCase{Name: c.name, Classname: js.Name, Errors: c.errors, Failures: c.failures}
		if len(c.out) > 0 {
			jc.SystemOut = strings.Join(c.out, "\n") + "\n"
		}
		js.Cases = append(js.Cases, jc)
		js.Tests++
		switch {
		case len(c.errors) > 0:
			js.Errors++
		case len(c.failures) > 0:
			js.Failures++
		}
	}
	return js
}

// encodeJUnit writes the report as indented XML with its header.
func encodeJUnit(w io.Writer, out JUnitSuites) error {
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
