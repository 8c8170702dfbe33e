// Package session is one run of kiln: the one pipeline that every command
// judging objects goes through. The settings are resolved (flags, a KRM
// functionConfig or Argo CD's environment over the config file), the
// inputs read by the one input step (input.go: discovered with the run's
// excludes, kustomizations and charts rendered, App specs compiled), the
// context read in a first pass (package lint), and every object admitted
// and judged by every checker (package rules). kiln lint, build, fix, fn,
// test, rules, diff, argocd generate and psa plan each make one call here and
// report what it returns, and ExitCode (outcome.go) is the one map from
// what they return to an exit code. A setting, a context or an admission
// phase added here is every command's; the content cache is kiln lint's.
package session

import (
	"fmt"
	"io"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
	"github.com/kilnhq/kiln/session/settings"
)

// Session is the settings of one run.
type Session struct {
	Settings *settings.Settings
	// Config and Options are the settings as the engine and discovery read
	// them.
	Config  *rules.Config
	Options *rules.Options
	// Stdin is what the path "-" reads.
	Stdin io.Reader
	// given are the settings given outside the config file, for a run
	// over another tree (--new-from-rev).
	given *settings.Settings
}

// New resolves the settings given (a command's flags, a functionConfig,
// Argo CD's environment) over the config file nearest the paths.
func New(given *settings.Settings, paths []string, stdin io.Reader) (*Session, error) {
	s, err := given.Load(paths)
	if err != nil {
		return nil, err
	}
	return &Session{Settings: s, Config: s.RuleConfig(), Options: s.Options(), Stdin: stdin, given: given}, nil
}

// FromArgo resolves the settings of an Argo CD plugin run from its
// environment (settings.FromArgo) over the config file of the current
// directory; what it notes of the environment goes to notes.
func FromArgo(getenv func(string) (string, bool), environ []string, stdin io.Reader, notes io.Writer) (*Session, error) {
	given, said, err := settings.FromArgo(getenv, environ)
	if err != nil {
		return nil, err
	}
	for _, n := range said {
		fmt.Fprintln(notes, "kiln: "+n)
	}
	return New(given, nil, stdin)
}

// Threshold is the lowest severity of a finding that fails the run (0:
// none fails it).
func (s *Session) Threshold() rules.Severity { return s.Settings.Threshold() }

// Fails reports whether res holds an unsuppressed finding at the run's
// fail-on level.
func (s *Session) Fails(res *rules.Result) bool { return FailsAt(res, s.Threshold()) }

// Verdict is the outcome of a run that found res and met inputErrs:
// InputErrors for input problems, ErrFindings for findings at the fail-on
// level, else nil.
func (s *Session) Verdict(res *rules.Result, inputErrs []error) error {
	if len(inputErrs) > 0 {
		return InputErrors(inputErrs)
	}
	if s.Fails(res) {
		return ErrFindings
	}
	return nil
}

// FailsAt reports whether res holds an unsuppressed finding at or above
// threshold.
func FailsAt(res *rules.Result, threshold rules.Severity) bool {
	switch threshold {
	case rules.Error:
		return res.Summary.Errors > 0
	case rules.Warning:
		return res.Summary.Errors+res.Summary.Warnings > 0
	case rules.Info:
		return res.Summary.Errors+res.Summary.Warnings+res.Summary.Infos > 0
	}
	return false
}

// engine is the rule engine of the run: every registered checker.
func (s *Session) engine() *rules.Engine {
	e := &rules.Engine{Checkers: checkers.All(), Options: s.Options, Config: s.Config}
	if sh := s.Settings.Shard; sh.On() {
		e.Judges = func(o *manifest.Object) bool { return sh.Holds(shardID(o.Ref(), o.File)) }
	}
	return e
}

// Judge judges objects held in memory (compiled, rendered or handed over)
// through the same two passes as a lint of files, as one input in their
// order; files are the files they came from, for the reports. The
// findings stay in memory (Result.Findings), and the objects keep their
// content (the object the API server would admit). objs must hold no App
// spec (compile them first).
func (s *Session) Judge(objs []*manifest.Object, files []rules.FileObjects) (*rules.Result, error) {
	e := s.engine()
	unit := &discover.Unit{Source: &manifest.Source{Objects: objs}}
	out, err := lint.Run(e, lint.Input{Units: []*discover.Unit{unit}, KeepContent: true, SpillAfter: -1}, false)
	if err != nil {
		return nil, err
	}
	res := out.Result
	res.Files = files
	res.Summary.Files = len(files)
	return res, nil
}
