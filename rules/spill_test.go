package rules

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/spill"
	"github.com/kilnhq/kiln/manifest"
)

// findingsWithTies makes n findings from few values, so that many compare
// equal or differ only in what compareFindings looks at last (severity,
// suppression) or not at all (the object's apiVersion, the fix), and some
// are exact repeats.
func findingsWithTies(n int, seed uint64) []Finding {
	r := rand.New(rand.NewPCG(seed, 1))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	fs := make([]Finding, n)
	for i := range fs {
		f := Finding{
			Rule:     pick("psa/runAsNonRoot", "psa/privileged", "object/duplicate"),
			Severity: Severity(1 + r.IntN(3)),
			Message:  pick("a", "b", "", "multi\nline ünïcode"),
			Pos:      manifest.Position{File: pick("a.yaml", "b.yaml", ""), Line: r.IntN(3), Column: r.IntN(2)},
			Object:   manifest.Ref{APIVersion: pick("v1", "apps/v1"), Kind: pick("Pod", "Deployment"), Namespace: pick("", "ns"), Name: pick("web", "db")},
			Field:    pick("", "spec.containers[0]"),
		}
		if r.IntN(4) == 0 {
			f.Suppressed = &Suppression{Kind: pick("annotation", "config"), Reason: pick("", "why")}
		}
		if r.IntN(5) == 0 {
			f.AssumedNamespace = pick("default", "ns")
		}
		if r.IntN(3) == 0 {
			f.Fix = &Fix{Action: FixAPIVersion, Template: pick("", "spec.template"), Container: r.IntN(3) - 1, APIVersion: pick("apps/v1", "")}
		}
		fs[i] = f
		if i > 0 && r.IntN(5) == 0 {
			fs[i] = fs[r.IntN(i)] // a repeat
		}
		// Tell apart findings that compare equal, to check their order.
		if fs[i].Fix == nil {
			fs[i].Fix = &Fix{Container: i}
		}
	}
	return fs
}

// collect reads a store's findings the way a report does.
func collect(t *testing.T, s *spill.Sorter[Finding]) []Finding {
	t.Helper()
	mem, sp, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{Findings: dedup(mem), spill: sp}
	defer res.Close()
	var out []Finding
	if err := res.Each(func(f Finding) error { out = append(out, f); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSpillSameAsInMemory: findings spilled in sorted runs and merged come
// out as sortAndDedup orders them in memory: the same findings, ties in
// report order, repeats dropped across runs, also once the runs are
// compacted (more than the 64 runs package spill keeps apart).
func TestSpillSameAsInMemory(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	cases := []struct {
		name     string
		n, limit int
	}{
		{"nothing spills", 50, 0},
		{"under the limit", 50, 100},
		{"one finding a run", 40, 1},
		{"runs of 7", 500, 7},
		{"exactly full", 64, 16},
		{"compacted", 64*3 + 5, 1},
		{"compacted twice, larger runs", 64*2*5 + 3, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := findingsWithTies(tc.n, uint64(tc.n))
			want := sortAndDedup(fs)
			s := newFindingSorter(tc.limit)
			for _, f := range fs {
				s.Add(f)
			}
			spilled, _ := s.Spilled()
			if got := collect(t, s); !reflect.DeepEqual(got, want) {
				t.Errorf("spilled=%v: %d findings differ from sortAndDedup's %d\n got: %v\nwant: %v", spilled, len(got), len(want), got, want)
			}
			if spilled != (tc.limit > 0 && tc.n >= tc.limit) {
				t.Errorf("spilled=%v with %d findings, limit %d", spilled, tc.n, tc.limit)
			}
		})
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// TestSpillEncoding: a finding read back from the spill is the one written,
// also with strings longer than the read buffer.
func TestSpillEncoding(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	cases := []Finding{
		{},
		{Rule: "psa/runAsNonRoot", Severity: Error, Message: "m", Pos: manifest.Position{File: "a.yaml", Line: 3, Column: 9},
			Object: manifest.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}, Field: "spec"},
		{Rule: "r", Severity: -1, Pos: manifest.Position{Line: -5, Column: 1 << 40}, Suppressed: &Suppression{}},
		{Message: long, Suppressed: &Suppression{Kind: "config", Reason: "ünï\ncode"}},
		{Field: long, Fix: &Fix{}},
		{Fix: &Fix{Action: FixNativeSidecar, Template: "spec.template", Container: 2, APIVersion: "batch/v1"}},
		{Rule: "psa/privileged", AssumedNamespace: "default", Suppressed: &Suppression{Kind: "annotation"}, Fix: &Fix{}},
		{AssumedNamespace: "monitoring"},
	}
	var b []byte
	for _, f := range cases {
		b = appendFinding(b, f)
	}
	r := bufio.NewReaderSize(bytes.NewReader(b), 16)
	for i, want := range cases {
		got, err := readFinding(r)
		if err != nil {
			t.Fatalf("finding %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("finding %d: read %+v, wrote %+v", i, got, want)
		}
	}
	if _, err := readFinding(r); err == nil || err.Error() != "EOF" {
		t.Errorf("after the last finding: %v, want EOF", err)
	}
	// A run cut short is an error, not the end.
	last := len(appendFinding(nil, cases[len(cases)-1]))
	for _, cut := range []int{1, last - 1} {
		r := bufio.NewReader(bytes.NewReader(b[:len(b)-cut]))
		var err error
		for err == nil {
			_, err = readFinding(r)
		}
		if !strings.Contains(err.Error(), "unexpected EOF") {
			t.Errorf("cut %d bytes short: %v, want unexpected EOF", cut, err)
		}
	}
}

// TestSpillWithoutTempDir: when the temp file cannot be made the findings
// stay in memory, in the same order.
func TestSpillWithoutTempDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()+"/missing")
	fs := findingsWithTies(100, 7)
	s := newFindingSorter(3)
	for _, f := range fs {
		s.Add(f)
	}
	if _, err := s.Spilled(); err == nil {
		t.Fatal("the temp file was made in a missing directory")
	}
	if got, want := collect(t, s), sortAndDedup(fs); !reflect.DeepEqual(got, want) {
		t.Errorf("%d findings, want %d", len(got), len(want))
	}
}

// sortAndDedup is what a run keeps of findings in memory.
func sortAndDedup(fs []Finding) []Finding {
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, compareFindings)
	return dedup(fs)
}

// errFeed judges one batch, then fails.
type errFeed struct{ sliceFeed }

func (f errFeed) Each(judge func(Batch)) error {
	f.sliceFeed.Each(judge)
	return os.ErrClosed
}

// TestStreamSpills: a streamed run that spills counts and keeps what one
// in memory does, removes its temp file on Close and when it fails.
func TestStreamSpills(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	var docs []string
	for _, name := range []string{"b", "a", "c", "a"} {
		docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+"}\n")
	}
	objs := manifest.ReadFile(manifest.Stdin, strings.NewReader(strings.Join(docs, "---\n"))).Objects
	if len(objs) != len(docs) {
		t.Fatalf("%d objects, want %d", len(objs), len(docs))
	}
	checker := &Checker{Name: "every", Rules: []*Rule{{ID: "t/one", Severity: Warning}, {ID: "t/two", Severity: Error}},
		Prepare: func(p *Pass) (Judge, error) {
			return func(o *manifest.Object) {
				p.Report(Diagnostic{Rule: "t/one", Object: o, Field: "metadata.name", Message: "one"})
				p.Report(Diagnostic{Rule: "t/two", Object: o, Field: "kind", Message: "two"})
				p.Report(Diagnostic{Rule: "t/two", Object: o, Field: "kind", Message: "two"}) // a repeat
			}, nil
		}}
	run := func(spill int, feed Feed) (*Result, error) {
		return (&Engine{Checkers: []*Checker{checker}, SpillAfter: spill}).Stream(objs, feed)
	}
	mem, err := run(0, sliceFeed(objs))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(1, sliceFeed(objs))
	if err != nil {
		t.Fatal(err)
	}
	if res.spill == nil || res.Findings != nil {
		t.Fatalf("a run with SpillAfter 1 did not spill")
	}
	var got []Finding
	if err := res.Each(func(f Finding) error { got = append(got, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, mem.Findings) || res.Summary != mem.Summary {
		t.Errorf("spilled: %v %+v\nin memory: %v %+v", got, res.Summary, mem.Findings, mem.Summary)
	}
	kept := res.Keep(func(f Finding) bool { return f.Rule == "t/two" })
	if want := mem.Keep(func(f Finding) bool { return f.Rule == "t/two" }); kept.Summary != want.Summary {
		t.Errorf("Keep of the spilled result counts %+v, of the one in memory %+v", kept.Summary, want.Summary)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kept.Each(func(Finding) error { return nil }); err == nil {
		t.Error("Each after Close: no error")
	}
	if _, err := run(1, errFeed{sliceFeed(objs)}); err == nil {
		t.Error("a failing feed: no error")
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// BenchmarkFindingStore: findings added, spilled in runs of 4096 (kiln
// lint's size) and read back merged; reports the bytes a finding takes in
// the temp file.
func BenchmarkFindingStore(b *testing.B) {
	b.Setenv("TMPDIR", b.TempDir())
	fs := findingsWithTies(100_000, 1)
	b.ReportAllocs()
	for b.Loop() {
		s := newFindingSorter(4096)
		for _, f := range fs {
			s.Add(f)
		}
		mem, sp, err := s.Finish()
		if err != nil || mem != nil {
			b.Fatal(err, len(mem))
		}
		b.ReportMetric(float64(sp.Size())/float64(len(fs)), "file-B/finding")
		n := 0
		if err := (&Result{spill: sp}).Each(func(Finding) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		sp.Close()
	}
}
