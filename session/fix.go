package session

import (
	"errors"
	"io"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/session/fix"
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
// read as they are there, for fix.Run, which places the repairs.
func (s *Session) judgeForFix(paths []string, edited map[string][]byte) (*fix.Judged, error) {
	in, err := s.read(paths, readOptions{edited: edited, keepData: true})
	if err != nil {
		return nil, err
	}
	res, err := s.Judge(in.x.All, in.listed())
	if err != nil {
		return nil, err
	}
	j := &fix.Judged{Result: res, InputErrs: in.errs(), Units: in.found.Units, Warnings: in.found.Warnings}
	for i, src := range in.files {
		j.Plain = append(j.Plain, &fix.File{Path: src.Path, Src: in.data[i], Objects: src.Objects, Errs: src.Errs})
	}
	return j, nil
}
