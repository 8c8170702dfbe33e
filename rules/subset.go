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
	out := *r
	out.Findings = nil
	out.Summary.Errors, out.Summary.Warnings, out.Summary.Infos, out.Summary.Suppressed = 0, 0, 0, 0
	for _, f := range r.Findings {
		if !keep[key{f.Pos.File, f.Object}] {
			continue
		}
		out.Findings = append(out.Findings, f)
		switch {
		case f.Suppressed != nil:
			out.Summary.Suppressed++
		case f.Severity == Error:
			out.Summary.Errors++
		case f.Severity == Warning:
			out.Summary.Warnings++
		default:
			out.Summary.Infos++
		}
	}
	return &out
}
