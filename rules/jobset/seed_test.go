package jobset_test

import (
	"testing"

	"github.com/kilnhq/kiln/report/reporttest"
	"github.com/kilnhq/kiln/rules/checkers"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
)

// TestSeeds runs all of kiln's own checkers over the seed scenarios in
// testdata/seed and compares the JSON reports with the golden files.
func TestSeeds(t *testing.T) {
	ruletest.CheckSeeds(t, "testdata/seed", reporttest.JSON, checkers.Own()...)
}
