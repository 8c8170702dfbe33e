package policytest

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/report"
)

// RunPaths finds the test files under paths and runs each; package report
// writes the run (report.WriteTests).
func RunPaths(paths []string) *report.TestRun {
	files, errs := Find(paths)
	rep := &report.TestRun{Files: files, Errors: errs}
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
		results, said, err := Run(s)
		if err != nil {
			rep.Errors = append(rep.Errors, err)
			continue
		}
		rep.Cases = append(rep.Cases, results...)
		for _, n := range said.Notes {
			rep.Notes = append(rep.Notes, s.File+": "+n)
		}
		rep.Warnings = append(rep.Warnings, said.Warnings...)
	}
	return rep
}
