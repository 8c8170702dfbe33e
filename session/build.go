package session

import (
	"errors"
	"fmt"
	"io"

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
	// options are the build's, and threshold its fail-on level, for
	// Deliver.
	options   BuildOptions
	threshold rules.Severity
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
	in, err := s.read(paths, readOptions{outDir: o.OutDir, plain: true, dropConfigs: true})
	if err != nil {
		return nil, err
	}
	if err := inputErrors(in.set.Errors()); err != nil {
		return nil, err
	}
	if err := inputErrors(compiler.MisnamedSpecs(in.set.Objects())); err != nil {
		return nil, err
	}
	x := in.x
	if o.SyncWaves {
		if err := x.AddSyncWaves(); err != nil {
			return nil, inputErrors([]error{err})
		}
	}
	if err := inputErrors(append(x.Errors, compiler.OutputOrder(x.Compiled)...)); err != nil {
		return nil, err
	}
	threshold := s.Threshold()
	b := &Built{Compiled: x.Compiled, Warnings: x.Warnings, options: o, threshold: threshold}
	b.Refused = len(b.Warnings) > 0 && threshold != 0 && threshold <= rules.Warning
	if len(b.Compiled) == 0 {
		return b, ErrNoSpecs
	}
	if b.Files, err = outdir.Files(b.Compiled); err != nil {
		return b, err
	}
	if o.NoLint {
		if o.ShowMutated {
			return b, errors.New("--show-mutated prints the objects as the lint admitted them: drop --no-lint")
		}
		return b, nil
	}
	res, err := s.Judge(x.All, in.listed())
	if err != nil {
		return b, err
	}
	b.Findings = res.OnObjects(b.Compiled)
	b.Refused = b.Refused || s.Fails(b.Findings)
	return b, nil
}

// Deliver hands over what a build made as its options ask, unless it is
// Refused (a Refused error): with Check, how the files under OutDir differ
// from it, on stderr (ErrFindings when they do); with OutDir, the files
// written there; with ShowMutated, the objects as admitted; else the YAML
// stream of the objects, on stdout.
func (b *Built) Deliver(stdout, stderr io.Writer) error {
	if b.Refused {
		return &Refused{Msg: fmt.Sprintf("build refused: findings at --fail-on %s (fix the spec, or use --fail-on / --no-lint)", b.threshold)}
	}
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
