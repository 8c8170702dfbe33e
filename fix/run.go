package fix

import (
	"fmt"
	"io"

	"github.com/kilnhq/kiln/internal/atomicfile"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Linter lints objects as kiln lint does (specs compiled, the config
// applied); files says which file each object came from. It returns the
// result and the errors of bad inputs (App specs that do not compile).
type Linter func(objs []*manifest.Object, files []rules.FileObjects) (*rules.Result, []error, error)

// RunOptions configure Run.
type RunOptions struct {
	Options
	// Lint judges the files before and after fixing.
	Lint Linter
	// Skip, when set, leaves out the paths it reports (the config's exclusions).
	Skip func(path string) bool
	// DryRun writes nothing; each change is a unified diff on Diff instead.
	DryRun bool
	Diff   io.Writer
	// Info receives what was fixed, per change and in total.
	Info io.Writer
}

// Outcome is what a Run did and what remains.
type Outcome struct {
	// Remaining is the lint of the files as they are after fixing.
	Remaining *rules.Result
	// InputErrs are files that could not be read, parsed, compiled or
	// written (those are left unchanged).
	InputErrs []error
	// Fixes and Files count the changes made and the files they are in.
	Fixes, Files int
}

// Run is kiln fix: it reads the files under paths, lints them, fixes what
// the findings allow, writes the files that change (atomically, keeping
// their mode) or their diffs, and lints the result. An error means the
// lint itself could not run.
func Run(paths []string, o RunOptions) (*Outcome, error) {
	expanded, inputErrs := manifest.Expand(paths)
	var files []*File
	for _, p := range expanded {
		if o.Skip != nil && o.Skip(p) {
			continue
		}
		f := ReadFile(p)
		inputErrs = append(inputErrs, f.Errs...)
		files = append(files, f)
	}
	res, specErrs, err := o.Lint(objectsOf(files, nil))
	if err != nil {
		return nil, err
	}
	out := &Outcome{InputErrs: append(inputErrs, specErrs...)}
	after := map[*File][]byte{}
	for _, r := range Fix(files, res.Findings, o.Options) {
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
		after[r.File] = r.Output
		out.Files++
		out.Fixes += len(r.Changes)
		printChanges(o.Info, r)
	}
	verb := "fixed"
	if o.DryRun {
		verb = "would fix"
	}
	fmt.Fprintf(o.Info, "kiln fix: %s %d %s in %d %s\n", verb, out.Fixes, plural(out.Fixes, "problem", "problems"), out.Files, plural(out.Files, "file", "files"))

	// What remains is what kiln cannot fix (or was not asked to).
	out.Remaining, _, err = o.Lint(objectsOf(files, after))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// objectsOf is the files' objects and which file each came from, a file's
// content read from after when it has an entry there (the fixed content,
// not yet or never written).
func objectsOf(files []*File, after map[*File][]byte) ([]*manifest.Object, []rules.FileObjects) {
	var objs []*manifest.Object
	var fo []rules.FileObjects
	for _, f := range files {
		fobjs := f.Objects
		if out, ok := after[f]; ok {
			fobjs, _ = manifest.Parse(f.Path, out)
		}
		entry := rules.FileObjects{File: f.Path}
		for _, o := range fobjs {
			entry.Objects = append(entry.Objects, o.Ref())
		}
		fo = append(fo, entry)
		objs = append(objs, fobjs...)
	}
	return objs, fo
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
