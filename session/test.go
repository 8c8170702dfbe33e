package session

import "github.com/kilnhq/kiln/admit/policytest"

// Test is kiln test: it finds the policy test files under the paths
// (default "."; manifest.WalkTree's walk, as every command's) and runs
// each case as the API server would judge its request. The error is the
// run's outcome once the report is written: ErrReported for a broken test
// file, ErrFindings for a case that failed or could not be evaluated, or
// with strict for a warning (a policy the API server refuses as written).
func Test(paths []string, strict bool) (*policytest.Report, error) {
	rep := policytest.RunPaths(paths, policytest.DefaultOptions())
	switch {
	case len(rep.Errors) > 0:
		return rep, ErrReported
	case !rep.Passed(), strict && len(rep.Warnings) > 0:
		return rep, ErrFindings
	}
	return rep, nil
}
