package session

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/argocd"
	"github.com/kilnhq/kiln/discover/flux"
	"github.com/kilnhq/kiln/internal/judgecache"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/session/settings"
)

// LintOptions are what a lint reads beside its paths.
type LintOptions struct {
	// RepoContext: when only files are named (pre-commit's staged files),
	// the rest of their Git repository is read for context (Namespaces,
	// policies, params, CRDs, StorageClasses), as a whole-tree run would;
	// nothing is reported on it.
	RepoContext bool
	// Objects lists each file's objects in the Result (for reports per
	// object); else only the files are listed.
	Objects bool
	// ListSkipped lists each skipped file in the text report.
	ListSkipped bool
}

// Linted is what a lint found.
type Linted struct {
	// Result are the findings; they may be in a temp file (Close it).
	Result *rules.Result
	// Inputs are what the run read beside its findings, for the reports:
	// Inputs.Errors are the input problems (unreadable or invalid files,
	// bad App specs), which make the run fail.
	Inputs report.Inputs
	// Warnings are what discovery noted without failing (kustomize's
	// deprecations), for the user.
	Warnings []error
	// Cache counts the batches of objects the content cache was asked
	// for, held and was given (nil: the run used none). The reports never
	// show it: they are the same with and without the cache.
	Cache *judgecache.Stats
}

// Lint is kiln lint: it discovers what the paths hold (default "."),
// renders the kustomizations and charts, compiles the App specs and judges
// every object, streamed, a file at a time.
func (s *Session) Lint(paths []string, o LintOptions) (*Linted, error) {
	l, found, err := s.lint(paths, o)
	if err != nil {
		return nil, err
	}
	if err := s.compare(paths, found, l); err != nil {
		l.Result.Close()
		return nil, err
	}
	return l, nil
}

// lint is Lint without the baseline: the findings of the run's shard.
func (s *Session) lint(paths []string, o LintOptions) (*Linted, *discover.Result, error) {
	c, err := s.cache()
	if err != nil {
		return nil, nil, err
	}
	found := s.discover(paths, readOptions{cache: renderCache(c)})
	in := lint.Input{Files: found.Files, Units: found.Units, Stdin: s.Stdin}
	if o.RepoContext {
		in.Context = repoContext(paths, found, s.Settings)
	}
	e := s.engine()
	if c != nil {
		in.Cache, in.Parsed = c, c.Sub("parsed")
		defer c.Trim()
	}
	out, err := lint.Run(e, in, o.Objects)
	if err != nil {
		return nil, nil, err
	}
	var stats *judgecache.Stats
	if c != nil {
		st := c.Stats()
		stats = &st
	}
	inputErrs := append(found.Errs, out.Errs...)
	inputs := inputsFound(found, inputErrs, out.Skipped, s.Settings, o.ListSkipped)
	inputs.ContextFiles = len(in.Context)
	l := &Linted{Result: out.Result, Inputs: inputs, Warnings: found.Warnings, Cache: stats}
	if s.Settings.Shard.On() {
		s.shard(l, found)
	}
	return l, found, nil
}

// inputsFound summarises for the reports what a run read beside its
// findings.
func inputsFound(found *discover.Result, inputErrs []error, skipped []manifest.Skipped, set *settings.Settings, listSkipped bool) report.Inputs {
	in := report.Inputs{Errors: inputErrs, Warnings: found.Warnings, Config: set.File, ListSkipped: listSkipped,
		Charts: found.Count("chart"), Kustomizations: found.Count("kustomization"),
		FluxKustomizations: found.Count(flux.UnitKind), ArgoCDApplications: found.Count(argocd.UnitKind)}
	in.Skipped = append(append(in.Skipped, found.Skipped...), skipped...)
	in.NotFixed = notFixed(found)
	manifest.SortErrors(in.Errors)
	return in
}

// repoContext lists the other manifest files of the Git repository when
// only files are named (pre-commit passes the staged ones), so that they
// are judged with the context of a whole-tree run: lint reads them for
// Namespaces, policies, params, CRDs and StorageClasses and reports nothing
// on them. It is empty for directories, stdin, or files outside a
// repository.
func repoContext(args []string, found *discover.Result, set *settings.Settings) []string {
	if len(args) == 0 {
		return nil
	}
	for _, a := range args {
		if fi, err := os.Stat(a); a == manifest.Stdin || err != nil || fi.IsDir() {
			return nil
		}
	}
	root := discover.GitRoot(args[0])
	if root == "" {
		return nil
	}
	linted := map[string]bool{}
	for _, f := range found.Files {
		if abs, err := filepath.Abs(f); err == nil {
			linted[abs] = true
		}
	}
	files, _ := manifest.Expand([]string{root})
	var out []string
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil || linted[abs] || set.Excluded(f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// notFixed are the files kiln fix edits nothing in: the templates of
// charts (and of the charts HelmReleases render), where it gives advice
// instead, and JSON files.
func notFixed(found *discover.Result) map[string]bool {
	out := map[string]bool{}
	for _, f := range found.Files {
		if strings.EqualFold(filepath.Ext(f), ".json") {
			out[f] = true
		}
	}
	for _, u := range found.Units {
		if (u.Kind == "chart" || u.Kind == "helmrelease") && u.Source != nil {
			for _, o := range u.Source.Objects {
				out[o.File] = true
			}
		}
	}
	return out
}
