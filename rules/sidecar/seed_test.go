package sidecar_test

import (
	"path/filepath"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/apiversions"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
	"github.com/kilnhq/kiln/rules/jobset"
	"github.com/kilnhq/kiln/rules/sidecar"
	"github.com/kilnhq/kiln/rules/storage"
)

// TestSeeds runs all of kiln's own checkers over the seed scenarios in
// testdata/seed and compares the JSON reports with the golden files.
func TestSeeds(t *testing.T) {
	ruletest.CheckSeeds(t, "testdata/seed", sidecar.Checker, jobset.Checker, storage.Checker, apiversions.Checker)
}

// TestCompilerExamplesClean: what the compiler emits for the examples
// (examples/*/out, checked in) has no finding from kiln's own rules.
func TestCompilerExamplesClean(t *testing.T) {
	files, err := filepath.Glob("../../examples/*/out/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Skipf("no compiled examples: %v", err)
	}
	set := manifest.ReadFiles(files, nil)
	if errs := set.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	eng := &rules.Engine{Checkers: []*rules.Checker{sidecar.Checker, jobset.Checker, storage.Checker, apiversions.Checker}}
	res, err := eng.Run(set.Objects(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Errorf("%s: %s %s: %s", f.Pos, f.Rule, f.Field, f.Message)
	}
	if len(set.Objects()) < len(files) {
		t.Errorf("read %d objects from %d files", len(set.Objects()), len(files))
	}
}
