package ruletest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/rules"
)

// CheckSeeds runs the checkers together over every *.yaml in dir and hands
// each result to check with the file's golden twin, x.yaml →
// x.json.golden (reporttest.JSON compares the JSON report with it). Each
// seed must produce at least one finding.
func CheckSeeds(t *testing.T, dir string, check func(t *testing.T, golden string, res *rules.Result), checkers ...*rules.Checker) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed fixtures in %s: %v", dir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res := Run(t, filepath.ToSlash(f), data, Options(t, data), checkers...)
			if len(res.Active()) == 0 {
				t.Errorf("%s: a seed scenario must produce findings", f)
			}
			check(t, strings.TrimSuffix(f, ".yaml")+".json.golden", res)
		})
	}
}
