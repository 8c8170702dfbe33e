package sidecar_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report/reporttest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
)

// TestSeeds runs all of kiln's own checkers over the seed scenarios in
// testdata/seed and compares the JSON reports with the golden files.
func TestSeeds(t *testing.T) {
	ruletest.CheckSeeds(t, "testdata/seed", reporttest.JSON, checkers.Own()...)
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
	eng := &rules.Engine{Checkers: checkers.Own()}
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

// BenchmarkOwnCheckers runs kiln's own checkers through the engine over
// every fixture of their packages, parsed 50 times over (about 7,000 objects).
func BenchmarkOwnCheckers(b *testing.B) {
	var files []string
	for _, p := range []string{"sidecar", "jobset", "storage", "apiversions"} {
		m, _ := filepath.Glob("../" + p + "/testdata/*/*.yaml")
		files = append(files, m...)
	}
	var objs []*manifest.Object
	for i := 0; i < 50; i++ {
		objs = append(objs, manifest.ReadFiles(files, nil).Objects()...)
	}
	for _, o := range objs {
		o.Content() // decoded once per object, shared by all checkers (as in kiln lint)
	}
	eng := &rules.Engine{Checkers: checkers.Own()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := eng.Run(objs, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(objs)), "objects")
}

// FuzzOwnCheckers: whatever YAML the reader accepts, kiln's own checkers
// do not panic (bad input never panics), every finding names a field, and
// an engine that drops content as it judges finds the same.
func FuzzOwnCheckers(f *testing.F) {
	for _, p := range []string{"sidecar", "jobset", "storage", "apiversions"} {
		m, _ := filepath.Glob("../" + p + "/testdata/*/*.yaml")
		for _, file := range m {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	own := checkers.Own()
	eng := &rules.Engine{Checkers: own}
	dropping := &rules.Engine{Checkers: own, DropContent: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _ := manifest.Parse("fuzz.yaml", data)
		res, err := eng.Run(objs, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range res.Findings {
			if x.Field == "" {
				t.Fatalf("%s without a field: %s", x.Rule, x.Message)
			}
		}
		// Dropping content as objects are judged (kiln lint) changes nothing.
		objs, _ = manifest.Parse("fuzz.yaml", data)
		res2, err := dropping.Run(objs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res2.Findings) != len(res.Findings) {
			t.Fatalf("%d findings with DropContent, %d without", len(res2.Findings), len(res.Findings))
		}
		for i := range res.Findings {
			a, b := res.Findings[i], res2.Findings[i]
			if a.Rule != b.Rule || a.Pos != b.Pos || a.Message != b.Message || a.Field != b.Field || a.Severity != b.Severity {
				t.Fatalf("finding %d differs with DropContent:\n%+v\n%+v", i, b, a)
			}
		}
	})
}
