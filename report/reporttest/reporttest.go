// Package reporttest checks rendered reports against golden files, for
// the tests of packages report itself depends on (the rule families' seed
// scenarios), so that only test code reaches up to report.
package reporttest

import (
	"bytes"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
)

// JSON compares the JSON report (the version 1 contract) of res with the
// golden file (refreshed with -update).
func JSON(t *testing.T, goldenFile string, res *rules.Result) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Write(&buf, "json", res, report.Options{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, goldenFile, buf.Bytes())
}
