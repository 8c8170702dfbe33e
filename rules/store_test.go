package rules

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// streamStore is a FindingStore that keeps its findings "outside memory":
// sorted in a slice handed out as a stream, with a file standing for its
// temp file (removed by Close and Discard).
type streamStore struct {
	dir    string
	fs     []Finding
	file   string
	closed bool
}

func (s *streamStore) Add(f Finding) {
	if s.file == "" {
		s.file = filepath.Join(s.dir, "store")
		os.WriteFile(s.file, nil, 0o600)
	}
	s.fs = append(s.fs, f)
}

func (s *streamStore) Finish() ([]Finding, FindingStream, error) {
	slices.SortStableFunc(s.fs, CompareFindings)
	return nil, s, nil
}

func (s *streamStore) Discard() { s.Close() }

func (s *streamStore) Each(fn func(Finding) error) error {
	if s.closed {
		return os.ErrClosed
	}
	for _, f := range s.fs {
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func (s *streamStore) Close() error {
	s.closed = true
	if s.file != "" {
		os.Remove(s.file)
	}
	return nil
}

// errFeed judges one batch, then fails.
type errFeed struct{ sliceFeed }

func (f errFeed) Each(judge func(Batch)) error {
	f.sliceFeed.Each(judge)
	return os.ErrClosed
}

// TestStreamSpills: a run whose store keeps the findings outside memory
// counts and keeps what one in memory does, and lets its store go on Close
// and when it fails.
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
		e := &Engine{Checkers: []*Checker{checker}}
		if spill > 0 {
			e.Findings = func() FindingStore { return &streamStore{dir: dir} }
		}
		return e.Stream(objs, feed)
	}
	mem, err := run(0, sliceFeed(objs))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(1, sliceFeed(objs))
	if err != nil {
		t.Fatal(err)
	}
	if res.stream == nil || res.Findings != nil {
		t.Fatalf("a run with a store that streams kept its findings in memory")
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
