package fix

import (
	"fmt"
	"io"
	"maps"

	"github.com/kilnhq/kiln/internal/plural"
	"github.com/kilnhq/kiln/manifest"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/internal/atomicfile"
	"github.com/kilnhq/kiln/rules"
)

// Judged is a judgement of the input as kiln lint makes it, with what was
// judged: Run places the repairs the findings carry in the files to edit.
type Judged struct {
	Result *rules.Result
	// InputErrs are the inputs that could not be read, parsed or compiled.
	InputErrs []error
	// Plain are the plain files judged, as read (their bytes, objects and
	// problems), and Units the kustomizations and charts rendered.
	Plain []*File
	Units []*discover.Unit
	// Warnings are what reading the input noted without failing
	// (kustomize's deprecations).
	Warnings []error
}

// RunOptions configure Run.
type RunOptions struct {
	Options
	// Judge judges the input as kiln lint does: before fixing (edited is
	// nil) and after, with the new content of the files that changed in
	// edited (by path), written or not (--dry-run). It reads; Run places
	// the repairs and edits.
	Judge func(edited map[string][]byte) (*Judged, error)
	// DryRun writes nothing; each change is a unified diff on Diff instead.
	DryRun bool
	Diff   io.Writer
	// Info receives what was fixed, per change and in total.
	Info io.Writer
}

// Outcome is what a Run did and what remains.
type Outcome struct {
	// Remaining is the judgement of the input as it is after fixing.
	Remaining *rules.Result
	// InputErrs are inputs that could not be read, parsed, compiled or
	// written (those are left unchanged).
	InputErrs []error
	// Fixes and Files count the changes made and the files they are in.
	Fixes, Files int
	// Warnings are what reading the input noted without failing.
	Warnings []error
}

// Run is kiln fix: it judges the input, makes the repairs the findings
// carry in their files, judges the input again with the new content and
// takes back every repair after which an object has a finding it did not
// have (saying why), then writes the files that change (atomically,
// keeping their mode) or their diffs, says what it cannot repair, and
// returns what remains. An error means the judgement itself could not run.
func Run(o RunOptions) (*Outcome, error) {
	j, err := o.Judge(nil)
	if err != nil {
		return nil, err
	}
	before, err := CountFindings(j.Result)
	if err != nil {
		return nil, err
	}
	out := &Outcome{InputErrs: j.InputErrs, Warnings: j.Warnings}
	pl := newPlan(place(j, nil))
	results, after, rest, err := pl.settle(o, before)
	if err != nil {
		return nil, err
	}
	failed := out.writeFiles(o, results, after)
	pl.printTotals(o, out)

	// What remains is what kiln cannot fix (or was not asked to, or
	// refused to).
	if failed {
		// Judge what is on disk.
		if rest, err = o.Judge(after); err != nil {
			return nil, err
		}
	}
	place(rest, after) // the repairs it cannot make are no longer offered
	pl.withdrawRefused(rest.Result)
	out.Remaining = rest.Result
	if o.DryRun {
		if out.Remaining, err = pl.remainingAsRead(j, rest); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeFiles writes each file that changes (its diff with DryRun) and says
// what changed in it, counting the fixes and files; a file that cannot be
// written is an input error, left out of after. It reports whether a write
// failed.
func (out *Outcome) writeFiles(o RunOptions, results []*Result, after map[string][]byte) (failed bool) {
	for _, r := range results {
		if r.Err != nil {
			out.InputErrs = append(out.InputErrs, fmt.Errorf("%v (file left unchanged)", r.Err))
			continue
		}
		if r.Skipped != "" {
			fmt.Fprintf(o.Info, "%s: %s\n", r.File.Path, r.Skipped)
		}
		if !r.Changed() {
			continue
		}
		if o.DryRun {
			io.WriteString(o.Diff, UnifiedDiff(r.File.Path, r.File.Src, r.Output))
		} else if err := atomicfile.WriteFile(r.File.Path, r.Output, r.File.Mode); err != nil {
			out.InputErrs = append(out.InputErrs, fmt.Errorf("%v (file left unchanged)", err))
			delete(after, r.File.Path)
			failed = true
			continue
		}
		out.Files++
		out.Fixes += len(r.Changes)
		printChanges(o.Info, r)
	}
	return failed
}

// printTotals says the plan's notes, the repairs refused and why, and how
// many problems were fixed in how many files.
func (pl *plan) printTotals(o RunOptions, out *Outcome) {
	for _, n := range pl.p.notes {
		fmt.Fprintln(o.Info, n)
	}
	for _, n := range pl.refusals() {
		fmt.Fprintln(o.Info, n)
	}
	verb := "fixed"
	if o.DryRun {
		verb = "would fix"
	}
	fmt.Fprintf(o.Info, "kiln fix: %s %d %s in %d %s\n", verb, out.Fixes, plural.Word(out.Fixes, "problem", "problems"), out.Files, plural.Word(out.Files, "file", "files"))
}

// withdrawRefused drops the repair of each finding whose repair was
// refused: it is not offered again.
func (pl *plan) withdrawRefused(res *rules.Result) {
	for i, f := range res.Findings {
		if pl.wasRefused(f) {
			res.Findings[i].Fix = nil
		}
	}
}

// remainingAsRead is what remains after a dry run, which wrote nothing:
// the findings of the first judgement (at the positions of the files as
// they are) that the judgement of the fixed content still has, by key and
// count; suppressed and baselined ones are all kept.
func (pl *plan) remainingAsRead(j, rest *Judged) (*rules.Result, error) {
	left, err := CountFindings(rest.Result)
	if err != nil {
		return nil, err
	}
	pl.withdrawRefused(j.Result)
	return j.Result.Keep(func(f rules.Finding) bool {
		if f.Suppressed != nil || f.Baselined {
			return true
		}
		k := KeyOf(f)
		if left[k] == 0 {
			return false
		}
		left[k]--
		return true
	}), nil
}

// settle makes the plan's repairs in memory and judges the result until
// no object has a finding it did not have before: the repairs of an object
// that has one are tried one at a time, in order, each kept unless it
// makes one; new findings on objects no repair was made on take back the
// repairs of their files, and if that is not enough, every repair. It
// returns the files' results, their new content by path and the
// judgement of it.
func (pl *plan) settle(o RunOptions, before Counted) ([]*Result, map[string][]byte, *Judged, error) {
	var (
		results []*Result
		after   map[string][]byte
		rest    *Judged
	)
	judge := func() ([]rules.Finding, error) {
		// Fix edits the objects' nodes: each try starts from the files' bytes.
		results = Fix(fresh(pl.p.files), pl.findings(), o.Options)
		after = map[string][]byte{}
		for _, r := range results {
			if r.Changed() {
				after[r.File.Path] = r.Output
			}
		}
		var err error
		if rest, err = o.Judge(after); err != nil {
			return nil, err
		}
		if len(after) == 0 {
			return nil, nil // nothing changed: nothing new can be the repairs'
		}
		return NewFindings(before, rest.Result)
	}
	news, err := judge()
	for round := 0; err == nil && len(news) > 0; round++ {
		suspects := pl.units(byObject(news))
		switch {
		case round == 0 && len(suspects) > 0:
			err = pl.trySingly(suspects, judge)
		case round <= 1:
			pl.refuseWhere(news, func(u unit, nf rules.Finding) bool { return u.obj.file == nf.Pos.File })
		default:
			pl.refuseWhere(news, func(unit, rules.Finding) bool { return true })
		}
		if err == nil {
			news, err = judge()
		}
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return results, after, rest, nil
}

// fresh parses the files again from their bytes (a file that did not
// parse stays as it is).
func fresh(files []*File) []*File {
	out := make([]*File, len(files))
	for i, f := range files {
		if len(f.Errs) > 0 || f.Src == nil {
			out[i] = f
			continue
		}
		cp := *f
		cp.Objects, cp.Errs = manifest.Parse(f.Path, f.Src)
		out[i] = &cp
	}
	return out
}

// trySingly tries the repairs of each suspect object one at a time, in
// order, with the ones kept so far, and refuses each one after which the
// object has a new finding.
func (pl *plan) trySingly(suspects map[objectKey][]unit, judge func() ([]rules.Finding, error)) error {
	kept := map[objectKey]map[rules.Fix]bool{}
	for obj := range suspects {
		kept[obj] = map[rules.Fix]bool{}
	}
	defer func() { pl.trial = nil }()
	for k := 0; ; k++ {
		pl.trial = map[objectKey]map[rules.Fix]bool{}
		tried := false
		for obj, us := range suspects {
			t := maps.Clone(kept[obj])
			if k < len(us) {
				t[us[k].fix] = true
				tried = true
			}
			pl.trial[obj] = t
		}
		if !tried {
			return nil
		}
		news, err := judge()
		if err != nil {
			return err
		}
		on := byObject(news)
		for obj, us := range suspects {
			if k >= len(us) {
				continue
			}
			if nf := pl.newOn(obj, on); len(nf) > 0 {
				pl.refuse(us[k], nf[0])
			} else {
				kept[obj][us[k].fix] = true
			}
		}
	}
}

// refuseWhere refuses every repair that match pairs with a new finding.
func (pl *plan) refuseWhere(news []rules.Finding, match func(unit, rules.Finding) bool) {
	for i := range pl.p.findings {
		u, ok := pl.unitOf(i)
		if !ok || pl.refused[u] != nil {
			continue
		}
		for _, nf := range news {
			if match(u, nf) {
				pl.refuse(u, nf)
				break
			}
		}
	}
}

// printChanges lists what was fixed in one file, one line per change.
func printChanges(w io.Writer, r *Result) {
	for _, c := range r.Changes {
		fmt.Fprintf(w, "%s: %s: %s: %s\n", c.Pos, c.Rule, c.Object, c.Message)
	}
	for _, c := range r.Cautions {
		fmt.Fprintf(w, "%s: caution: %s: %s: %s\n", c.Pos, c.Rule, c.Object, c.Message)
	}
	for _, d := range r.Reformatted {
		fmt.Fprintf(w, "%s: document %d could not be patched line by line and was re-encoded whole\n", r.File.Path, d+1)
	}
}

// MatchesAnyRule reports whether a --rule pattern names at least one of the rules.
func MatchesAnyRule(pattern string, ids []string) bool {
	for _, id := range ids {
		if rules.MatchRule(pattern, id) {
			return true
		}
	}
	return false
}
