package lint

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// findingsWithTies makes n findings from few values, so that many compare
// equal or differ only in what rules.CompareFindings looks at last (severity,
// suppression) or not at all (the object's apiVersion, the fix), and some
// are exact repeats.
func findingsWithTies(n int, seed uint64) []rules.Finding {
	r := rand.New(rand.NewPCG(seed, 1))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	fs := make([]rules.Finding, n)
	for i := range fs {
		f := rules.Finding{
			Rule:     pick("psa/runAsNonRoot", "psa/privileged", "object/duplicate"),
			Severity: rules.Severity(1 + r.IntN(3)),
			Message:  pick("a", "b", "", "multi\nline ünïcode"),
			Pos:      manifest.Position{File: pick("a.yaml", "b.yaml", ""), Line: r.IntN(3), Column: r.IntN(2)},
			Object:   manifest.Ref{APIVersion: pick("v1", "apps/v1"), Kind: pick("Pod", "Deployment"), Namespace: pick("", "ns"), Name: pick("web", "db")},
			Field:    pick("", "spec.containers[0]"),
		}
		if r.IntN(4) == 0 {
			f.Suppressed = &rules.Suppression{Kind: pick("annotation", "config"), Reason: pick("", "why")}
		}
		if r.IntN(5) == 0 {
			f.AssumedNamespace = pick("default", "ns")
		}
		if r.IntN(3) == 0 {
			f.Fix = &rules.Fix{Action: rules.FixAPIVersion, Template: pick("", "spec.template"), Container: r.IntN(3) - 1, APIVersion: pick("apps/v1", "")}
		}
		fs[i] = f
		if i > 0 && r.IntN(5) == 0 {
			fs[i] = fs[r.IntN(i)] // a repeat
		}
		// Tell apart findings that compare equal, to check their order.
		if fs[i].Fix == nil {
			fs[i].Fix = &rules.Fix{Container: i}
		}
	}
	return fs
}

// collect reads a store's findings the way a report does.
func collect(t *testing.T, s spillStore) []rules.Finding {
	t.Helper()
	res, err := rules.ResultOf(s)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var out []rules.Finding
	if err := res.Each(func(f rules.Finding) error { out = append(out, f); return nil }); err != nil {
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
			s := newSpillStore(tc.limit)
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
	cases := []rules.Finding{
		{},
		{Rule: "psa/runAsNonRoot", Severity: rules.Error, Message: "m", Pos: manifest.Position{File: "a.yaml", Line: 3, Column: 9},
			Object: manifest.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}, Field: "spec"},
		{Rule: "r", Severity: -1, Pos: manifest.Position{Line: -5, Column: 1 << 40}, Suppressed: &rules.Suppression{}},
		{Message: long, Suppressed: &rules.Suppression{Kind: "config", Reason: "ünï\ncode"}},
		{Field: long, Fix: &rules.Fix{}},
		{Fix: &rules.Fix{Action: rules.FixNativeSidecar, Template: "spec.template", Container: 2, APIVersion: "batch/v1"}},
		{Rule: "psa/privileged", AssumedNamespace: "default", Suppressed: &rules.Suppression{Kind: "annotation"}, Fix: &rules.Fix{}},
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
	s := newSpillStore(3)
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
func sortAndDedup(fs []rules.Finding) []rules.Finding {
	fs = slices.Clone(fs)
	rules.SortFindings(fs)
	out := fs[:0]
	for _, f := range fs {
		if n := len(out); n > 0 && out[n-1].Rule == f.Rule && out[n-1].Object == f.Object && out[n-1].Field == f.Field && out[n-1].Message == f.Message && out[n-1].Pos == f.Pos {
			continue
		}
		out = append(out, f)
	}
	return out
}

// BenchmarkFindingStore: findings added, spilled in runs of 4096 (kiln
// lint's size) and read back merged; reports the bytes a finding takes in
// the temp file.
func BenchmarkFindingStore(b *testing.B) {
	b.Setenv("TMPDIR", b.TempDir())
	fs := findingsWithTies(100_000, 1)
	b.ReportAllocs()
	for b.Loop() {
		s := newSpillStore(4096)
		for _, f := range fs {
			s.Add(f)
		}
		mem, sp, err := s.Finish()
		if err != nil || mem != nil {
			b.Fatal(err, len(mem))
		}
		b.ReportMetric(float64(sp.(interface{ Size() int64 }).Size())/float64(len(fs)), "file-B/finding")
		n := 0
		if err := sp.Each(func(rules.Finding) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		sp.Close()
	}
}
