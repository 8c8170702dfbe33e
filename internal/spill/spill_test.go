package spill

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// item sorts by key alone; seq tells apart items of the same key, to check
// that ties keep the order they were added in.
type item struct{ key, seq int }

func compareItems(a, b item) int { return a.key - b.key }

func appendItem(b []byte, v item) []byte {
	return binary.AppendVarint(binary.AppendVarint(b, int64(v.key)), int64(v.seq))
}

func readItem(r *bufio.Reader) (item, error) {
	if _, err := r.Peek(1); err == io.EOF {
		return item{}, io.EOF
	}
	key, err := binary.ReadVarint(r)
	if err != nil {
		return item{}, err
	}
	seq, err := binary.ReadVarint(r)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return item{int(key), int(seq)}, err
}

func newSorter(limit int) *Sorter[item] {
	return &Sorter[item]{Limit: limit, Compare: compareItems, Append: appendItem, Read: readItem, Name: "items"}
}

// items makes n items with few keys, so that most tie.
func items(n int, seed uint64) []item {
	r := rand.New(rand.NewPCG(seed, 2))
	out := make([]item, n)
	for i := range out {
		out[i] = item{key: r.IntN(7) - 3, seq: i}
	}
	return out
}

// sorted reads what a Sorter returns, in memory or from its file.
func sorted(t *testing.T, s *Sorter[item]) []item {
	t.Helper()
	mem, file, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if file == nil {
		return mem
	}
	defer file.Close()
	if mem != nil {
		t.Errorf("Finish returned %d items in memory and a file", len(mem))
	}
	var out []item
	if err := file.Each(func(v item) error { out = append(out, v); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSortedAsOneStableSort: whatever the limit (nothing spilled, runs of
// one, runs compacted once or several times), the items come out as one
// stable sort of them all orders them, and no temp file is left.
func TestSortedAsOneStableSort(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for _, tc := range []struct {
		name     string
		n, limit int
		spills   bool
	}{
		{"no limit", 100, 0, false},
		{"under the limit", 50, 100, false},
		{"none", 0, 1, false},
		{"runs of one", 40, 1, true},
		{"runs of 7", 500, 7, true},
		{"exactly full", 64, 16, true},
		{"compacted", maxRuns*3 + 5, 1, true},
		{"compacted, larger runs", maxRuns*2*5 + 3, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := items(tc.n, uint64(tc.n))
			want := slices.Clone(in)
			slices.SortStableFunc(want, compareItems)
			s := newSorter(tc.limit)
			for _, v := range in {
				s.Add(v)
			}
			if spilled, err := s.Spilled(); spilled != tc.spills || err != nil {
				t.Errorf("spilled %v (%v), want %v", spilled, err, tc.spills)
			}
			if got := sorted(t, s); !slices.Equal(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// TestWithoutTempDir: when the temp file cannot be made the items stay in
// memory, in the same order.
func TestWithoutTempDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()+"/missing")
	in := items(100, 7)
	s := newSorter(3)
	for _, v := range in {
		s.Add(v)
	}
	if _, err := s.Spilled(); err == nil || !strings.HasPrefix(err.Error(), "items spill: ") {
		t.Fatalf("the temp file was made in a missing directory, or the error does not say what spilled: %v", err)
	}
	want := slices.Clone(in)
	slices.SortStableFunc(want, compareItems)
	if got := sorted(t, s); !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestEachErrors: Each stops at fn's error and returns it as is; after
// Close it fails; a run cut short is a read error, not its end.
func TestEachErrors(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s := newSorter(2)
	for _, v := range items(10, 1) {
		s.Add(v)
	}
	_, file, err := s.Finish()
	if err != nil || file == nil {
		t.Fatalf("no file: %v", err)
	}
	stop := errors.New("stop here")
	n := 0
	if err := file.Each(func(item) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Each after fn failed: %v after %d calls, want %v after 1", err, n, stop)
	}
	cut := file.runs[0]
	cut.size--
	if err := file.read(cut, func(item) error { return nil }); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("a run cut short: %v, want unexpected EOF", err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	if err := file.Each(func(item) error { return nil }); err == nil {
		t.Error("Each after Close: no error")
	}
}
