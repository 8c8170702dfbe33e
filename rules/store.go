package rules

import "slices"

// FindingStore keeps a run's findings as the judges report them (one Add
// at a time) and gives them back in CompareFindings order, findings that
// compare equal in the order added. A run keeps them in memory unless
// Engine.Findings gives another store.
type FindingStore interface {
	Add(Finding)
	// Finish returns the findings sorted: all of them in memory, or nil and
	// the stream the Result reads them from (and closes).
	Finish() ([]Finding, FindingStream, error)
	// Discard lets go of what a run that failed stored.
	Discard()
}

// FindingStream is findings a store kept outside memory, read back in
// order.
type FindingStream interface {
	Each(fn func(Finding) error) error
	Close() error
}

// ResultOf returns the Result of the findings a store holds: sorted,
// repeats dropped, counted. Close it.
func ResultOf(s FindingStore) (*Result, error) {
	res := &Result{}
	if err := res.take(s); err != nil {
		return nil, err
	}
	return res, nil
}

// take makes the store's findings the Result's, and counts them.
func (r *Result) take(s FindingStore) error {
	mem, stream, err := s.Finish()
	if err != nil {
		return err
	}
	r.Findings, r.stream = dedup(mem), stream
	if err := r.count(); err != nil {
		r.Close()
		return err
	}
	return nil
}

// memStore is the store in memory.
type memStore struct{ fs []Finding }

func (m *memStore) Add(f Finding) { m.fs = append(m.fs, f) }

func (m *memStore) Finish() ([]Finding, FindingStream, error) {
	slices.SortStableFunc(m.fs, CompareFindings)
	return m.fs, nil, nil
}

func (m *memStore) Discard() {}
