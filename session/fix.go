package session

import (
	"errors"
	"io"

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

// Fix is kiln fix: it judges what the paths hold (default "."), makes the
// repairs the findings carry in the files, and judges the result.
func (s *Session) Fix(paths []string, o FixOptions) (*fix.Outcome, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		if p == manifest.Stdin {
			return nil, ErrFixStdin
		}
	}
	return fix.Run(paths, fix.RunOptions{
		Options: o.Options,
		Lint: func(objs []*manifest.Object, files []rules.FileObjects) (*rules.Result, []error, error) {
			x := compiler.Expand(objs)
			res, err := s.Judge(x.All, files)
			return res, x.Errors, err
		},
		Skip:   s.Config.Excluded,
		DryRun: o.DryRun, Diff: o.Diff, Info: o.Info,
	})
}
