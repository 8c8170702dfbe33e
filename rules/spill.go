package rules

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// findingStore holds a run's findings in the order they are reported.
// With a limit, at most that many are in memory: beyond, they are sorted
// (stably) and written to a temp file as one run, and the runs are merged
// when the findings are read. A merge that takes each run's next finding
// in compareFindings order, the earlier run first on a tie, gives the
// order of one stable sort of all the findings, so the merged and
// deduplicated stream is what sortAndDedup returns for them in memory.
type findingStore struct {
	limit int // 0: never spill
	buf   []Finding
	spill *spillFile // nil until the first run is written
	err   error      // the spill could not be written: the findings stay in memory
}

// maxRuns is how many runs the file holds before they are merged into one
// run, so that reading them back keeps few buffers whatever the count.
const maxRuns = 64

// add keeps a finding, spilling the buffer once it holds limit of them.
func (s *findingStore) add(f Finding) {
	s.buf = append(s.buf, f)
	if s.limit > 0 && len(s.buf) >= s.limit && s.err == nil {
		s.flush()
	}
}

// flush writes the buffer as a sorted run. If the temp file cannot be
// made or written, the findings stay in memory and nothing spills again.
func (s *findingStore) flush() {
	slices.SortStableFunc(s.buf, compareFindings)
	if s.spill == nil {
		sp, err := newSpillFile()
		if err != nil {
			s.err = err
			return
		}
		s.spill = sp
	}
	if err := s.spill.writeRun(slices.Values(s.buf)); err != nil {
		s.err = err
		return
	}
	clear(s.buf) // let the strings go
	s.buf = s.buf[:0]
	if len(s.spill.runs) >= maxRuns {
		s.err = s.spill.compact()
	}
}

// finish returns the findings sorted and deduplicated when none spilled;
// else the spilled runs, with the last one (the buffer, sorted) in memory.
func (s *findingStore) finish() ([]Finding, *spillFile, error) {
	if s.spill == nil {
		return sortAndDedup(s.buf), nil, nil
	}
	if s.err != nil {
		// Spilling stopped part way (the temp file could not be written):
		// read back what was written and sort it all in memory, as if
		// nothing had spilled. The runs came first in report order.
		defer s.discard()
		var all []Finding
		for _, r := range s.spill.runs {
			if err := s.spill.read(r, func(f Finding) error { all = append(all, f); return nil }); err != nil {
				return nil, nil, err
			}
		}
		return sortAndDedup(append(all, s.buf...)), nil, nil
	}
	slices.SortStableFunc(s.buf, compareFindings)
	s.spill.tail = s.buf
	return nil, s.spill, nil
}

// discard removes the temp file, if any.
func (s *findingStore) discard() {
	if s.spill != nil {
		s.spill.Close()
	}
}

// spillFile is the temp file of a run's sorted runs, one after another,
// and the last run in memory.
type spillFile struct {
	f    *os.File
	path string // "" once removed
	end  int64
	runs []span
	tail []Finding
}

// span is one run in the file.
type span struct{ off, size int64 }

// newSpillFile makes the temp file and removes its name at once where the
// system allows it (the open file stays readable), so that nothing is
// left behind whatever happens next; elsewhere Close removes it.
func newSpillFile() (*spillFile, error) {
	f, err := os.CreateTemp("", "kiln-findings-*")
	if err != nil {
		return nil, fmt.Errorf("findings spill: %w", err)
	}
	sp := &spillFile{f: f, path: f.Name()}
	if os.Remove(sp.path) == nil {
		sp.path = ""
	}
	return sp, nil
}

// Close closes the file and removes it if it is still there.
func (sp *spillFile) Close() error {
	if sp == nil || sp.f == nil {
		return nil
	}
	err := sp.f.Close()
	sp.f = nil
	if sp.path != "" {
		if rerr := os.Remove(sp.path); err == nil {
			err = rerr
		}
		sp.path = ""
	}
	return err
}

// writeRun appends one run, already in order, to the file.
func (sp *spillFile) writeRun(fs func(yield func(Finding) bool)) error {
	w := &spillWriter{f: sp.f, off: sp.end}
	w.bw = bufio.NewWriterSize(w, 64<<10)
	var enc []byte
	for f := range fs {
		enc = appendFinding(enc[:0], f)
		w.bw.Write(enc)
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("findings spill: %w", err)
	}
	sp.runs = append(sp.runs, span{off: sp.end, size: w.off - sp.end})
	sp.end = w.off
	return nil
}

// spillWriter writes at increasing offsets of the file.
type spillWriter struct {
	f   *os.File
	off int64
	bw  *bufio.Writer
}

func (w *spillWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.off)
	w.off += int64(n)
	return n, err
}

// compact merges the runs in the file into one, appended after them.
func (sp *spillFile) compact() error {
	runs := sp.runs
	var rerr error
	merged := func(yield func(Finding) bool) {
		rerr = sp.merge(runs, nil, func(f Finding) error {
			if !yield(f) {
				return errStop
			}
			return nil
		})
	}
	if err := sp.writeRun(merged); err != nil {
		return err
	}
	if rerr != nil {
		sp.runs = sp.runs[:len(sp.runs)-1] // partial: the runs it merged are still there
		return rerr
	}
	sp.runs = sp.runs[len(runs):]
	return nil
}

var errStop = errors.New("stop")

// each calls fn for every finding in order, duplicates dropped as
// sortAndDedup drops them.
func (sp *spillFile) each(fn func(Finding) error) error {
	if sp.f == nil {
		return errors.New("findings spill: read after Close")
	}
	var prev Finding
	first := true
	return sp.merge(sp.runs, sp.tail, func(f Finding) error {
		if !first && sameFinding(prev, f) {
			return nil
		}
		first, prev = false, f
		return fn(f)
	})
}

// read calls fn for every finding of one run.
func (sp *spillFile) read(r span, fn func(Finding) error) error {
	br := bufio.NewReaderSize(io.NewSectionReader(sp.f, r.off, r.size), 16<<10)
	for {
		f, err := readFinding(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
	}
}

// merge calls fn for the findings of the runs and then tail, in
// compareFindings order, an earlier run first on a tie.
func (sp *spillFile) merge(runs []span, tail []Finding, fn func(Finding) error) error {
	h := &runHeap{}
	for i, r := range runs {
		src := &runSource{index: i, r: bufio.NewReaderSize(io.NewSectionReader(sp.f, r.off, r.size), 16<<10)}
		if err := src.next(); err != nil {
			return err
		}
		if src.ok {
			h.srcs = append(h.srcs, src)
		}
	}
	if len(tail) > 0 {
		src := &runSource{index: len(runs), mem: tail}
		src.next()
		h.srcs = append(h.srcs, src)
	}
	heap.Init(h)
	for h.Len() > 0 {
		src := h.srcs[0]
		if err := fn(src.cur); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
		if err := src.next(); err != nil {
			return err
		}
		if src.ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// runSource is one run being merged: its next finding and where the rest are.
type runSource struct {
	index int
	r     *bufio.Reader // a run in the file, or
	mem   []Finding     // the run in memory
	cur   Finding
	ok    bool
}

func (s *runSource) next() error {
	if s.r == nil {
		s.ok = len(s.mem) > 0
		if s.ok {
			s.cur, s.mem = s.mem[0], s.mem[1:]
		}
		return nil
	}
	f, err := readFinding(s.r)
	if err == io.EOF {
		s.ok = false
		return nil
	}
	s.cur, s.ok = f, err == nil
	return err
}

// runHeap orders the runs by their next finding, then by run.
type runHeap struct{ srcs []*runSource }

func (h *runHeap) Len() int { return len(h.srcs) }
func (h *runHeap) Less(i, j int) bool {
	if c := compareFindings(h.srcs[i].cur, h.srcs[j].cur); c != 0 {
		return c < 0
	}
	return h.srcs[i].index < h.srcs[j].index
}
func (h *runHeap) Swap(i, j int) { h.srcs[i], h.srcs[j] = h.srcs[j], h.srcs[i] }
func (h *runHeap) Push(x any)    { h.srcs = append(h.srcs, x.(*runSource)) }
func (h *runHeap) Pop() any {
	x := h.srcs[len(h.srcs)-1]
	h.srcs = h.srcs[:len(h.srcs)-1]
	return x
}

// A spilled finding is its strings and numbers in field order, each string
// a uvarint length and its bytes, each number a varint, and a byte of
// flags saying whether a Suppression, a Fix and an assumed namespace follow.
const (
	hasSuppression = 1 << iota
	hasFix
	hasAssumed
)

func appendFinding(b []byte, f Finding) []byte {
	b = appendString(b, f.Rule)
	b = binary.AppendVarint(b, int64(f.Severity))
	b = appendString(b, f.Message)
	b = appendString(b, f.Pos.File)
	b = binary.AppendVarint(b, int64(f.Pos.Line))
	b = binary.AppendVarint(b, int64(f.Pos.Column))
	b = appendString(b, f.Object.APIVersion)
	b = appendString(b, f.Object.Kind)
	b = appendString(b, f.Object.Namespace)
	b = appendString(b, f.Object.Name)
	b = appendString(b, f.Field)
	var flags byte
	if f.Suppressed != nil {
		flags |= hasSuppression
	}
	if f.Fix != nil {
		flags |= hasFix
	}
	if f.AssumedNamespace != "" {
		flags |= hasAssumed
	}
	b = append(b, flags)
	if s := f.Suppressed; s != nil {
		b = appendString(b, s.Kind)
		b = appendString(b, s.Reason)
	}
	if x := f.Fix; x != nil {
		b = appendString(b, string(x.Action))
		b = appendString(b, x.Template)
		b = binary.AppendVarint(b, int64(x.Container))
		b = appendString(b, x.APIVersion)
	}
	if f.AssumedNamespace != "" {
		b = appendString(b, f.AssumedNamespace)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// spillReader decodes one finding; the first error sticks.
type spillReader struct {
	r   *bufio.Reader
	buf []byte
	err error
}

func (d *spillReader) int() int {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	d.err = err
	return int(v)
}

func (d *spillReader) string() string {
	if d.err != nil {
		return ""
	}
	n, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.err = err
		return ""
	}
	if n == 0 {
		return ""
	}
	if int(n) <= d.r.Size() {
		// Read in place: string() is then the only copy.
		p, err := d.r.Peek(int(n))
		if err == nil {
			d.r.Discard(int(n))
			return string(p)
		}
	}
	d.buf = slices.Grow(d.buf[:0], int(n))[:n]
	_, d.err = io.ReadFull(d.r, d.buf)
	return string(d.buf)
}

// readFinding decodes the next finding; io.EOF at the end of the run.
func readFinding(r *bufio.Reader) (Finding, error) {
	if _, err := r.Peek(1); err == io.EOF {
		return Finding{}, io.EOF
	}
	d := &spillReader{r: r}
	var f Finding
	f.Rule = d.string()
	f.Severity = Severity(d.int())
	f.Message = d.string()
	f.Pos.File = d.string()
	f.Pos.Line = d.int()
	f.Pos.Column = d.int()
	f.Object.APIVersion = d.string()
	f.Object.Kind = d.string()
	f.Object.Namespace = d.string()
	f.Object.Name = d.string()
	f.Field = d.string()
	var flags byte
	if d.err == nil {
		flags, d.err = r.ReadByte()
	}
	if flags&hasSuppression != 0 {
		f.Suppressed = &Suppression{Kind: d.string(), Reason: d.string()}
	}
	if flags&hasFix != 0 {
		f.Fix = &Fix{Action: FixAction(d.string()), Template: d.string(), Container: d.int(), APIVersion: d.string()}
	}
	if flags&hasAssumed != 0 {
		f.AssumedNamespace = d.string()
	}
	if d.err != nil {
		if d.err == io.EOF {
			d.err = io.ErrUnexpectedEOF
		}
		return Finding{}, fmt.Errorf("findings spill: %w", d.err)
	}
	return f, nil
}

// sameFinding reports whether b repeats a, as sortAndDedup drops repeats.
func sameFinding(a, b Finding) bool {
	return a.Rule == b.Rule && a.Object == b.Object && a.Field == b.Field && a.Message == b.Message && a.Pos == b.Pos
}
