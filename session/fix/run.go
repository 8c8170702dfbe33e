package fix

import (
	"fmt"
	"github.com/kilnhq/kiln/internal/plural"
	"io"

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
// carry in their files, writes the files that change (atomically, keeping
// their mode) or their diffs, says what it cannot repair, and judges the
// result. An error means the judgement itself could not run.
func Run(o RunOptions) (*Outcome, error) {
	j, err := o.Judge(nil)
	if err != nil {
		return nil, err
	}
	out := &Outcome{InputErrs: j.InputErrs, Warnings: j.Warnings}
	p := place(j, nil)
	after := map[string][]byte{}
	for _, r := range Fix(p.files, p.findings, o.Options) {
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
			continue
		}
		after[r.File.Path] = r.Output
		out.Files++
		out.Fixes += len(r.Changes)
		printChanges(o.Info, r)
	}
	for _, n := range p.notes {
		fmt.Fprintln(o.Info, n)
	}
	verb := "fixed"
	if o.DryRun {
		verb = "would fix"
	}
	fmt.Fprintf(o.Info, "kiln fix: %s %d %s in %d %s\n", verb, out.Fixes, plural.Word(out.Fixes, "problem", "problems"), out.Files, plural.Word(out.Files, "file", "files"))

	// What remains is what kiln cannot fix (or was not asked to).
	rest, err := o.Judge(after)
	if err != nil {
		return nil, err
	}
	place(rest, after) // the repairs it cannot make are no longer offered
	out.Remaining = rest.Result
	return out, nil
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
