package session

import (
	"errors"
	"github.com/kilnhq/kiln/internal/pathkey"
	"io"
	"os"
	"sort"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/fix"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// FixOptions are what kiln fix reads beside its paths.
type FixOptions struct {
	fix.Options
	// DryRun writes nothing; each change is a unified diff on Diff instead.
	DryRun bool
	Diff   io.Writer
	// Info receives what was fixed, per change and in total.
	Info io.Writer
}

// ErrFixStdin is a fix asked to rewrite standard input.
var ErrFixStdin = errors.New("kiln fix rewrites files in place and cannot read standard input; name files or directories")

// Fix is kiln fix: it judges what the paths hold (default ".") as kiln
// lint does, kustomizations and charts rendered, makes the repairs the
// findings carry in the files the objects came from (a plain manifest, a
// kustomization's resource file, never a patch), says what to change in
// the chart's values or templates for an object rendered from a Helm
// template, and judges the result.
func (s *Session) Fix(paths []string, o FixOptions) (*fix.Outcome, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		if p == manifest.Stdin {
			return nil, ErrFixStdin
		}
	}
	return fix.Run(fix.RunOptions{
		Options: o.Options,
		Judge:   func(edited map[string][]byte) (*fix.Judged, error) { return s.judgeForFix(paths, edited) },
		DryRun:  o.DryRun, Diff: o.Diff, Info: o.Info,
	})
}

// judgeForFix judges what the paths hold, the files in edited (by path)
// read as they are there, and places the fixable findings in the files to
// edit.
func (s *Session) judgeForFix(paths []string, edited map[string][]byte) (*fix.Judged, error) {
	abs := make(map[string][]byte, len(edited))
	for p, data := range edited {
		abs[pathkey.Real(p)] = data
	}
	found := s.discover(paths, abs)
	j := &fix.Judged{InputErrs: found.Errs, Warnings: found.Warnings}
	var objs []*manifest.Object
	var listed []rules.FileObjects
	plain := map[objectKey]bool{}
	for _, p := range found.Files {
		f := readFixFile(p, edited)
		j.Files = append(j.Files, f)
		j.InputErrs = append(j.InputErrs, f.Errs...)
		listed = append(listed, fileEntry(p, f.Objects))
		for _, o := range f.Objects {
			plain[objectKey{o.File, o.Ref()}] = true
		}
		objs = append(objs, f.Objects...)
	}
	rendered := map[objectKey][]*manifest.Object{}
	chart := map[string]bool{} // unit directories that are charts
	for _, u := range found.Units {
		j.InputErrs = append(j.InputErrs, u.Source.Errs...)
		listed = append(listed, fileEntry(u.Source.Path, u.Source.Objects))
		for _, o := range u.Source.Objects {
			k := objectKey{o.File, o.Ref()}
			rendered[k] = append(rendered[k], o)
		}
		chart[u.Dir] = u.Kind == "chart" || u.Kind == "helmrelease" // a HelmRelease's objects are a chart's
		objs = append(objs, u.Source.Objects...)
	}
	x := compiler.Expand(objs)
	j.InputErrs = append(j.InputErrs, x.Errors...)
	res, err := s.Judge(x.All, listed)
	if err != nil {
		return nil, err
	}
	j.Result = res
	sources := map[string]*fix.File{}
	notes := map[string]bool{}
	for i, f := range res.Findings {
		k := objectKey{f.Pos.File, f.Object}
		if f.Fix == nil || f.Suppressed != nil || plain[k] || len(rendered[k]) == 0 {
			j.Findings = append(j.Findings, f) // on a plain file's object (or nothing to place)
			continue
		}
		if ro := rendered[k]; chart[ro[0].Unit] {
			if data, err := os.ReadFile(f.Pos.File); err == nil {
				notes[fix.TemplateAdvice(f, data)] = true
			}
			res.Findings[i].Fix = nil // not kiln fix's to repair: the report says so
			continue
		}
		src := sources[f.Pos.File]
		if src == nil {
			src = readFixFile(f.Pos.File, edited)
			sources[f.Pos.File] = src
			j.Files = append(j.Files, src)
		}
		on, reason, ok := fix.OnSource(f, rendered[k], src)
		if !ok {
			notes[f.Pos.String()+": "+f.Rule+": "+f.Object.String()+": kiln fix cannot repair it: "+reason] = true
			res.Findings[i].Fix = nil
			continue
		}
		j.Findings = append(j.Findings, on)
	}
	for n := range notes {
		j.Notes = append(j.Notes, n)
	}
	sort.Strings(j.Notes)
	return j, nil
}

// objectKey is an object by its file and reference, as findings name it.
type objectKey struct {
	file string
	ref  manifest.Ref
}

// readFixFile reads a file to fix, from edited when it has its new content.
func readFixFile(path string, edited map[string][]byte) *fix.File {
	data, ok := edited[path]
	if !ok {
		return fix.ReadFile(path)
	}
	objs, errs := manifest.Parse(path, data)
	return &fix.File{Path: path, Src: data, Objects: objs, Errs: errs}
}

// fileEntry lists a file with its objects, for reports.
func fileEntry(path string, objs []*manifest.Object) rules.FileObjects {
	fo := rules.FileObjects{File: path}
	for _, o := range objs {
		fo.Objects = append(fo.Objects, o.Ref())
	}
	return fo
}
