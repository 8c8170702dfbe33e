package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOwnRepository: kiln lint . in kiln's own clone reads its .kiln.yaml
// and judges what a user would (the examples), not the bad input of its
// tests: no input error and no error finding; and kiln build examples/
// compiles every example together (no two make the same object).
func TestOwnRepository(t *testing.T) {
	t.Chdir("../..")
	code, out, errOut := runKiln(t, "", "lint", "-f", "json", "--no-cache", ".")
	if code != 0 {
		t.Fatalf("kiln lint . in the repository: exit %d\n%s", code, errOut)
	}
	var rep struct {
		Summary  struct{ Files, Errors, InputErrors int } `json:"summary"`
		Findings []struct{ Rule, File string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if !strings.HasPrefix(f.File, "examples/") {
			t.Errorf("a finding outside examples/: %s %s", f.Rule, f.File)
		}
	}
	if rep.Summary.Files == 0 {
		t.Error("kiln lint . judged no file: the .kiln.yaml excludes the examples too")
	}
	code, _, errOut = runKiln(t, "", "build", "examples/", "-o", t.TempDir())
	if code != 0 {
		t.Errorf("kiln build examples/: exit %d\n%s", code, errOut)
	}
}
