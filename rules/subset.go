package rules

import (
	"slices"

	"github.com/kilnhq/kiln/manifest"
)

// OnObjects returns the result with only the findings on the given
// objects (matched by file and reference), the summary's finding counts
// recounted; the files, objects and rules counted stay as they are.
func (r *Result) OnObjects(objs []*manifest.Object) *Result {
	type key struct {
		file string
		ref  manifest.Ref
	}
	keep := map[key]bool{}
	for _, o := range objs {
		keep[key{o.File, o.Ref()}] = true
	}
	return r.Keep(func(f Finding) bool { return keep[key{f.Pos.File, f.Object}] })
}

// Keep returns the result with only the findings keep accepts, the
// summary's finding counts recounted. Of a Result that spilled, it shares
// the temp file (close either) and reads it again to count; an error doing
// so is what every Each of it returns.
func (r *Result) Keep(keep func(Finding) bool) *Result {
	out := *r
	if r.stream != nil {
		prev := r.keep
		out.keep = func(f Finding) bool { return (prev == nil || prev(f)) && keep(f) }
		out.err = out.count()
		return &out
	}
	out.Findings = nil
	for _, f := range r.Findings {
		if keep(f) {
			out.Findings = append(out.Findings, f)
		}
	}
	out.count()
	return &out
}

// count sets the finding counts of the summary.
func (r *Result) count() error {
	s := &r.Summary
	s.Errors, s.Warnings, s.Infos, s.Suppressed, s.Assumed, s.Baselined = 0, 0, 0, 0, 0, 0
	return r.Each(func(f Finding) error {
		if f.Suppressed == nil && !f.Baselined && f.AssumedNamespace != "" {
			s.Assumed++
		}
		switch {
		case f.Suppressed != nil:
			s.Suppressed++
		case f.Baselined:
			s.Baselined++
		case f.Severity == Error:
			s.Errors++
		case f.Severity == Warning:
			s.Warnings++
		default:
			s.Infos++
		}
		return nil
	})
}

// Baseline marks as Baselined the unsuppressed findings a baseline holds
// and recounts the summary. known is called once per reading of the
// findings (each Each, in order) and returns the test of that reading, so
// that a baseline holding one finding twice matches two of its copies, the
// first two in order, on every reading. It reads the findings once to
// count; an error doing so is returned (and what every Each returns).
func (r *Result) Baseline(known func() func(Finding) bool) error {
	if r.stream != nil {
		r.known = known
		r.err = nil
		r.err = r.count()
		return r.err
	}
	test := known()
	for i := range r.Findings {
		if f := &r.Findings[i]; f.Suppressed == nil {
			f.Baselined = test(*f)
		}
	}
	return r.count()
}

// SortFindings sorts findings in the engine's order (file, line, column,
// rule, message, object, field), as a Result holds them: for findings
// gathered from several runs (kiln report merge of shards).
func SortFindings(fs []Finding) { slices.SortStableFunc(fs, CompareFindings) }
