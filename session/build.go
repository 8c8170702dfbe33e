package session

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/compiler/outdir"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// BuildOptions are what a build reads beside its paths.
type BuildOptions struct {
	// OutDir is the output directory, which is never read as input.
	OutDir string
	// NoLint skips the lint of the compiled objects.
	NoLint bool
	// SyncWaves annotates the compiled objects with Argo CD sync waves.
	SyncWaves bool
	// ShowMutated keeps the compiled objects as the API server would admit
	// them (after mutating admission, defaulting and the create strategy)
	// for WriteAdmitted; it needs the lint.
	ShowMutated bool
	// Check compares the files under OutDir with the build's instead of
	// writing them (Deliver).
	Check bool
}

// Built is what a build made.
type Built struct {
	// Compiled are the objects the App specs compile to, in output order,
	// and Files the files -o writes for them (by path under the output
	// directory).
	Compiled []*manifest.Object
	Files    map[string][]byte
	// Warnings are the compiler's, each with its position.
	Warnings []error
	// Findings are the lint's findings on the compiled objects (nil with
	// NoLint); the other inputs are their context.
	Findings *rules.Result
	// Refused is set when a warning or a finding is at the fail-on level:
	// nothing may be written.
	Refused bool
	// options are the build's, for Deliver.
	options BuildOptions
}

// ErrNoSpecs is a build whose inputs hold no App spec.
var ErrNoSpecs = errors.New("no App specs (apiVersion " + compiler.APIVersion + ", kind " + compiler.Kind + ") among the inputs")

// Build is kiln build: it compiles the App specs among the paths (default
// "."), and judges what they compile to with the other inputs as context.
// Input errors (a bad spec, an object two specs emit) come back as
// InputErrors before anything compiled; ErrNoSpecs and later errors come
// with the Built so far, whose Warnings are the user's to see first.
func (s *Session) Build(paths []string, o BuildOptions) (*Built, error) {
	if o.Check && o.OutDir == "" {
		return nil, errors.New("--check needs -o DIR: the directory to compare with")
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	set := s.readBuildInputs(paths, o.OutDir)
	if err := inputErrors(set.Errors()); err != nil {
		return nil, err
	}
	if err := inputErrors(compiler.MisnamedSpecs(set.Objects())); err != nil {
		return nil, err
	}
	x := compiler.Expand(set.Objects())
	if o.SyncWaves {
		if err := x.AddSyncWaves(); err != nil {
			return nil, inputErrors([]error{err})
		}
	}
	if err := inputErrors(append(x.Errors, compiler.OutputOrder(x.Compiled)...)); err != nil {
		return nil, err
	}
	b := &Built{Compiled: x.Compiled, Warnings: x.Warnings, options: o}
	threshold := s.Threshold()
	b.Refused = len(b.Warnings) > 0 && threshold != 0 && threshold <= rules.Warning
	if len(b.Compiled) == 0 {
		return b, ErrNoSpecs
	}
	var err error
	if b.Files, err = outdir.Files(b.Compiled); err != nil {
		return b, err
	}
	if o.NoLint {
		if o.ShowMutated {
			return b, errors.New("--show-mutated prints the objects as the lint admitted them: drop --no-lint")
		}
		return b, nil
	}
	res, err := s.Judge(x.All, fileObjects(set))
	if err != nil {
		return b, err
	}
	b.Findings = res.OnObjects(b.Compiled)
	b.Refused = b.Refused || s.Fails(b.Findings)
	return b, nil
}

// Deliver hands over what a build made as its options ask: with Check, how
// the files under OutDir differ from it, on stderr (ErrFindings when they
// do); with OutDir, the files written there; with ShowMutated, the objects
// as admitted; else the YAML stream of the objects, on stdout.
func (b *Built) Deliver(stdout, stderr io.Writer) error {
	switch o := b.options; {
	case o.Check:
		d, err := outdir.Compare(o.OutDir, b.Files)
		if err != nil {
			return err
		}
		if !d.Empty() {
			d.Print(stderr, o.OutDir)
			return ErrFindings
		}
		return nil
	case o.OutDir != "":
		return outdir.Write(o.OutDir, b.Files)
	case o.ShowMutated:
		return WriteAdmitted(stdout, b.Compiled)
	}
	return manifest.Write(stdout, b.Compiled)
}

// readFiles expands and reads paths, dropping files the config excludes.
func (s *Session) readFiles(paths []string) *manifest.Set {
	files, errs := manifest.Expand(paths)
	kept := files[:0]
	for _, f := range files {
		if f == manifest.Stdin || !s.Settings.Excluded(f) {
			kept = append(kept, f)
		}
	}
	set := manifest.ReadFiles(kept, s.Stdin)
	set.Errs = append(errs, set.Errs...)
	return set
}

// readBuildInputs reads the inputs, leaving out the output directory so a
// previous build's files are not read back as inputs, and the files the
// config excludes.
func (s *Session) readBuildInputs(paths []string, outDir string) *manifest.Set {
	files, errs := manifest.Expand(paths)
	kept := files[:0]
	absOut := ""
	if outDir != "" {
		absOut, _ = filepath.Abs(outDir)
	}
	for _, f := range files {
		if f != manifest.Stdin && (s.Settings.Excluded(f) || within(absOut, f)) {
			continue
		}
		kept = append(kept, f)
	}
	set := manifest.ReadFiles(kept, s.Stdin)
	set.Errs = append(errs, set.Errs...)
	compiler.DropConfigFiles(set)
	return set
}

func within(dir, file string) bool {
	if dir == "" {
		return false
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// fileObjects lists each source file with its objects, for reports.
func fileObjects(set *manifest.Set) []rules.FileObjects {
	out := make([]rules.FileObjects, 0, len(set.Sources))
	for _, src := range set.Sources {
		fo := rules.FileObjects{File: src.Path}
		for _, o := range src.Objects {
			fo.Objects = append(fo.Objects, o.Ref())
		}
		out = append(out, fo)
	}
	return out
}

// WarningLine formats a compiler warning as file:line:col: warning: message.
func WarningLine(err error) string {
	if me, ok := err.(*manifest.Error); ok {
		return fmt.Sprintf("%s: warning: %s", me.Pos, me.Msg)
	}
	return "warning: " + err.Error()
}

// WriteAdmitted writes objects judged by a Build with ShowMutated as the API
// server would admit them (its dry-run response bodies): one YAML document
// each, keys sorted.
func WriteAdmitted(w io.Writer, objs []*manifest.Object) error {
	for i, o := range objs {
		content, err := o.Content()
		if err != nil {
			return fmt.Errorf("%s: %w", o.Ref(), err)
		}
		out, err := yaml.Marshal(content)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Ref(), err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}
