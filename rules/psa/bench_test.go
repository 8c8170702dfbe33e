package psa

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// benchCorpus generates n objects with the shared corpus generator, or skips.
func benchCorpus(b *testing.B, n int) []string {
	b.Helper()
	gen, err := filepath.Abs("../../../shared/bench/gen-corpus")
	if err != nil {
		b.Skip(err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3 not found; the corpus generator needs it")
	}
	dir := b.TempDir()
	if out, err := exec.Command("python3", gen, strconv.Itoa(n), dir).CombinedOutput(); err != nil {
		b.Skipf("gen-corpus: %v\n%s", err, out)
	}
	files, errs := manifest.Expand([]string{dir})
	if len(errs) > 0 || len(files) == 0 {
		b.Fatalf("no corpus files: %v", errs)
	}
	return files
}

// BenchmarkPSA measures Pod Security judgement over a generated corpus
// (python3 ../shared/bench/gen-corpus): "end-to-end" reads, parses and
// judges; "check" judges objects parsed (and decoded) once.
func BenchmarkPSA(b *testing.B) {
	files := benchCorpus(b, 2000)
	run := func(b *testing.B, objs []*manifest.Object) {
		if _, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}}).Run(objs, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("end-to-end", func(b *testing.B) {
		n := 0
		for i := 0; i < b.N; i++ {
			set := manifest.ReadFiles(files, nil)
			if len(set.Errors()) > 0 {
				b.Fatal(set.Errors())
			}
			objs := set.Objects()
			n += len(objs)
			run(b, objs)
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "objects/s")
	})
	b.Run("check", func(b *testing.B) {
		objs := manifest.ReadFiles(files, nil).Objects()
		run(b, objs) // decode content once
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			run(b, objs)
		}
		b.ReportMetric(float64(len(objs)*b.N)/b.Elapsed().Seconds(), "objects/s")
	})
}
