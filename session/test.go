package session

import "github.com/kilnhq/kiln/admit/policytest"

// Test is kiln test: it finds the policy test files under the paths
// (default "."; manifest.WalkTree's walk, as every command's) and runs
// each case as the API server would judge its request. The error is the
// run's outcome once the report is written: ErrReported for a broken test
// file, ErrFindings for a case that failed or could not be evaluated.
func Test(paths []string) (*policytest.Report, error) {
	rep := policytest.RunPaths(paths, policytest.DefaultOptions())
	switch {
	case len(rep.Errors) > 0:
		return rep, ErrReported
	case !rep.Passed():
		return rep, ErrFindings
	}
	return rep, nil
}
