package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// TestWriteTests: every format of kiln test counts the cases by status,
// and a broken test file is reported at its line (the goldens of every
// format are admit/policytest's testdata/outputs).
func TestWriteTests(t *testing.T) {
	run := &TestRun{
		Files: []string{"a/kiln-test.yaml", "b/kiln-test.yaml"},
		Cases: []TestCase{
			{Test: "t", File: "a/kiln-test.yaml", Case: "ok", Pos: manifest.Position{File: "a/kiln-test.yaml", Line: 3, Column: 5}, Expected: "allowed", Got: "allowed", Status: TestPass},
			{Test: "t", File: "a/kiln-test.yaml", Case: "bad", Pos: manifest.Position{File: "a/kiln-test.yaml", Line: 7, Column: 5}, Expected: "denied", Got: "allowed", Message: "expected denied, got allowed", Status: TestFail},
			{Test: "t", File: "a/kiln-test.yaml", Case: "cr", Pos: manifest.Position{File: "a/kiln-test.yaml", Line: 9, Column: 5}, Expected: "allowed", Got: "not evaluated", Message: "cannot evaluate", Status: TestError},
		},
		Warnings: []string{"a/policy.yaml:1:1: refused as written"},
		Errors:   []error{&manifest.Error{Pos: manifest.Position{File: "b/kiln-test.yaml", Line: 2, Column: 1}, Msg: "unknown key"}, errors.New("no test files under c")},
	}
	if p, f, e := run.Counts(); p != 1 || f != 1 || e != 1 || run.Passed() {
		t.Errorf("counts %d %d %d, passed %v", p, f, e, run.Passed())
	}
	for _, tc := range []struct{ format, want string }{
		{"text", "kiln test: 1 passed, 1 failed, 1 not evaluated, 1 warning, 2 broken test files (2 test files)\n"},
		{"json", `"summary": {` + "\n" + `    "brokenFiles": 2,` + "\n" + `    "failed": 1,`},
		{"junit", `<testcase name="test file" classname="b/kiln-test.yaml" file="b/kiln-test.yaml" line="2">`},
		{"github", "::error file=b/kiln-test.yaml,line=2,col=1,title=kiln-test/input::unknown key\n"},
	} {
		var buf bytes.Buffer
		if err := WriteTests(&buf, tc.format, run); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), tc.want) {
			t.Errorf("%s lacks %q:\n%s", tc.format, tc.want, buf.String())
		}
	}
	if err := CheckTestFormat("sarif"); err == nil || WriteTests(&bytes.Buffer{}, "sarif", run) == nil {
		t.Errorf("sarif: kiln test does not write it, want an error")
	}
}
