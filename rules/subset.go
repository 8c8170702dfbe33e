package rules

import "github.com/kilnhq/kiln/manifest"

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
	if r.spill != nil {
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
	s.Errors, s.Warnings, s.Infos, s.Suppressed, s.Assumed = 0, 0, 0, 0, 0
	return r.Each(func(f Finding) error {
		if f.Suppressed == nil && f.AssumedNamespace != "" {
			s.Assumed++
		}
		switch {
		case f.Suppressed != nil:
			s.Suppressed++
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
