package apiversions_test

import (
	"testing"

	"github.com/kilnhq/kiln/rules/apiversions"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
	"github.com/kilnhq/kiln/rules/jobset"
	"github.com/kilnhq/kiln/rules/policies"
	"github.com/kilnhq/kiln/rules/storage"
)

// TestSeeds runs all of kiln's own checkers over the seed scenarios in
// testdata/seed and compares the JSON reports with the golden files.
func TestSeeds(t *testing.T) {
	ruletest.CheckSeeds(t, "testdata/seed", policies.Checker, jobset.Checker, storage.Checker, apiversions.Checker)
}
