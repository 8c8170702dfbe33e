package session

import (
	"github.com/kilnhq/kiln/admit/policytest"
	"github.com/kilnhq/kiln/report"
)

// Test is kiln test: it finds the policy test files under the paths
// (default "."; manifest.WalkTree's walk, as every command's) and runs
// each case as the API server would judge its request (the admission
// stage, then the validating policies). The error is the run's outcome
// once the report is written (report.WriteTests): ErrReported for a broken
// test file, ErrFindings for a case that failed or could not be evaluated,
// or with strict for a warning (a policy the API server refuses as
// written).
func Test(paths []string, strict bool) (*report.TestRun, error) {
	rep := policytest.RunPaths(paths)
	switch {
	case len(rep.Errors) > 0:
		return rep, ErrReported
	case !rep.Passed(), strict && len(rep.Warnings) > 0:
		return rep, ErrFindings
	}
	return rep, nil
}
