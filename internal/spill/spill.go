// Package spill sorts more items than should stay in memory. A Sorter holds
// at most Limit items: beyond, it sorts them (stably) and writes them to a
// temp file as one run, and the runs are merged when the items are read.
// A merge that takes each run's next item in Compare order, the earlier run
// first on a tie, gives the order of one stable sort of all the items, so
// what a Sorter returns does not depend on Limit.
package spill

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Sorter sorts items added one at a time, in the order of one stable sort
// by Compare. Set every field before the first Add.
type Sorter[T any] struct {
	// Limit is how many items stay in memory (0: all of them).
	Limit   int
	Compare func(a, b T) int
	// Append writes an item at the end of b; Read reads the next one, and
	// returns io.EOF, and only then, at the end of a run.
	Append func(b []byte, v T) []byte
	Read   func(r *bufio.Reader) (T, error)
	// Name says what the items are, in the temp file's name
	// (kiln-<Name>-*) and in errors ("<Name> spill: …").
	Name string

	buf  []T
	file *File[T] // nil until the first run is written
	err  error    // the file could not be written: the items stay in memory
}

// maxRuns is how many runs the file holds before they are merged into one
// run, so that reading them back keeps few buffers whatever the count.
const maxRuns = 64

// Add keeps an item, writing the held ones as a run once Limit are held.
func (s *Sorter[T]) Add(v T) {
	s.buf = append(s.buf, v)
	if s.Limit > 0 && len(s.buf) >= s.Limit && s.err == nil {
		s.flush()
	}
}

// Spilled reports whether items went to the temp file, and the error that
// stopped them going there (nil while spilling works).
func (s *Sorter[T]) Spilled() (bool, error) { return s.file != nil, s.err }

// flush writes the held items as a sorted run. If the temp file cannot be
// made or written, the items stay in memory and nothing spills again.
func (s *Sorter[T]) flush() {
	slices.SortStableFunc(s.buf, s.Compare)
	if s.file == nil {
		f, err := s.newFile()
		if err != nil {
			s.err = err
			return
		}
		s.file = f
	}
	if err := s.file.writeRun(slices.Values(s.buf)); err != nil {
		s.err = err
		return
	}
	clear(s.buf) // let what the items hold go
	s.buf = s.buf[:0]
	if len(s.file.runs) >= maxRuns {
		s.err = s.file.compact()
	}
}

// Finish returns the items sorted: in memory when none spilled, else in the
// temp file (the last run in memory), for the caller to read with Each and
// to Close.
func (s *Sorter[T]) Finish() ([]T, *File[T], error) {
	if s.file == nil {
		slices.SortStableFunc(s.buf, s.Compare)
		return s.buf, nil, nil
	}
	if s.err != nil {
		// Spilling stopped part way (the temp file could not be written):
		// read back what was written and sort it all in memory, as if
		// nothing had spilled. The runs came first in the order added.
		defer s.Discard()
		var all []T
		for _, r := range s.file.runs {
			if err := s.file.read(r, func(v T) error { all = append(all, v); return nil }); err != nil {
				return nil, nil, err
			}
		}
		all = append(all, s.buf...)
		slices.SortStableFunc(all, s.Compare)
		return all, nil, nil
	}
	slices.SortStableFunc(s.buf, s.Compare)
	s.file.tail = s.buf
	return nil, s.file, nil
}

// Discard removes the temp file, if any.
func (s *Sorter[T]) Discard() {
	if s.file != nil {
		s.file.Close()
	}
}

// File is the temp file of a Sorter's sorted runs, one after another, and
// the last run in memory.
type File[T any] struct {
	s    *Sorter[T]
	f    *os.File
	path string // "" once removed
	end  int64
	runs []span
	tail []T
}

// span is one run in the file.
type span struct{ off, size int64 }

// newFile makes the temp file and removes its name at once where the
// system allows it (the open file stays readable), so that nothing is
// left behind whatever happens next; elsewhere Close removes it.
func (s *Sorter[T]) newFile() (*File[T], error) {
	f, err := os.CreateTemp("", "kiln-"+s.Name+"-*")
	if err != nil {
		return nil, s.errorf(err)
	}
	file := &File[T]{s: s, f: f, path: f.Name()}
	if os.Remove(file.path) == nil {
		file.path = ""
	}
	return file, nil
}

func (s *Sorter[T]) errorf(err error) error { return fmt.Errorf("%s spill: %w", s.Name, err) }

// Size is the bytes the runs take in the file.
func (file *File[T]) Size() int64 { return file.end }

// Close closes the file and removes it if it is still there.
func (file *File[T]) Close() error {
	if file == nil || file.f == nil {
		return nil
	}
	err := file.f.Close()
	file.f = nil
	if file.path != "" {
		if rerr := os.Remove(file.path); err == nil {
			err = rerr
		}
		file.path = ""
	}
	return err
}

// writeRun appends one run, already in order, to the file.
func (file *File[T]) writeRun(items func(yield func(T) bool)) error {
	w := &writer{f: file.f, off: file.end}
	w.bw = bufio.NewWriterSize(w, 64<<10)
	var enc []byte
	for v := range items {
		enc = file.s.Append(enc[:0], v)
		w.bw.Write(enc)
	}
	if err := w.bw.Flush(); err != nil {
		return file.s.errorf(err)
	}
	file.runs = append(file.runs, span{off: file.end, size: w.off - file.end})
	file.end = w.off
	return nil
}

// writer writes at increasing offsets of the file.
type writer struct {
	f   *os.File
	off int64
	bw  *bufio.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.off)
	w.off += int64(n)
	return n, err
}

// compact merges the runs in the file into one, appended after them.
func (file *File[T]) compact() error {
	runs := file.runs
	var rerr error
	merged := func(yield func(T) bool) {
		rerr = file.merge(runs, nil, func(v T) error {
			if !yield(v) {
				return errStop
			}
			return nil
		})
	}
	if err := file.writeRun(merged); err != nil {
		return err
	}
	if rerr != nil {
		file.runs = file.runs[:len(file.runs)-1] // partial: the runs it merged are still there
		return rerr
	}
	file.runs = file.runs[len(runs):]
	return nil
}

var errStop = errors.New("stop")

// Each calls fn for every item in order and stops at the first error fn
// or reading returns.
func (file *File[T]) Each(fn func(T) error) error {
	if file.f == nil {
		return file.s.errorf(errors.New("read after Close"))
	}
	return file.merge(file.runs, file.tail, fn)
}

// read calls fn for every item of one run.
func (file *File[T]) read(r span, fn func(T) error) error {
	br := bufio.NewReaderSize(io.NewSectionReader(file.f, r.off, r.size), 16<<10)
	for {
		v, err := file.s.Read(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return file.s.errorf(err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
}

// merge calls fn for the items of the runs and then tail, in Compare
// order, an earlier run first on a tie.
func (file *File[T]) merge(runs []span, tail []T, fn func(T) error) error {
	h := &runHeap[T]{compare: file.s.Compare}
	for i, r := range runs {
		src := &runSource[T]{index: i, r: bufio.NewReaderSize(io.NewSectionReader(file.f, r.off, r.size), 16<<10), read: file.s.Read}
		if err := src.next(); err != nil {
			return file.s.errorf(err)
		}
		if src.ok {
			h.srcs = append(h.srcs, src)
		}
	}
	if len(tail) > 0 {
		src := &runSource[T]{index: len(runs), mem: tail}
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
			return file.s.errorf(err)
		}
		if src.ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// runSource is one run being merged: its next item and where the rest are.
type runSource[T any] struct {
	index int
	r     *bufio.Reader // a run in the file, or
	mem   []T           // the run in memory
	read  func(*bufio.Reader) (T, error)
	cur   T
	ok    bool
}

func (s *runSource[T]) next() error {
	if s.r == nil {
		s.ok = len(s.mem) > 0
		if s.ok {
			s.cur, s.mem = s.mem[0], s.mem[1:]
		}
		return nil
	}
	v, err := s.read(s.r)
	if err == io.EOF {
		s.ok = false
		return nil
	}
	s.cur, s.ok = v, err == nil
	return err
}

// runHeap orders the runs by their next item, then by run.
type runHeap[T any] struct {
	srcs    []*runSource[T]
	compare func(a, b T) int
}

func (h *runHeap[T]) Len() int { return len(h.srcs) }
func (h *runHeap[T]) Less(i, j int) bool {
	if c := h.compare(h.srcs[i].cur, h.srcs[j].cur); c != 0 {
		return c < 0
	}
	return h.srcs[i].index < h.srcs[j].index
}
func (h *runHeap[T]) Swap(i, j int) { h.srcs[i], h.srcs[j] = h.srcs[j], h.srcs[i] }
func (h *runHeap[T]) Push(x any)    { h.srcs = append(h.srcs, x.(*runSource[T])) }
func (h *runHeap[T]) Pop() any {
	x := h.srcs[len(h.srcs)-1]
	h.srcs = h.srcs[:len(h.srcs)-1]
	return x
}
