package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/settings"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func init() { commands = append(commands, newLintCmd) }

// loadSettings resolves a command's settings over paths: those given (its
// flags, a functionConfig or Argo CD's environment) over the config file.
func loadSettings(given *settings.Settings, paths []string) (*settings.Settings, *rules.Config, *rules.Options, error) {
	s, err := given.Load(paths)
	if err != nil {
		return nil, nil, nil, &exitError{code: exitInput, msg: err.Error()}
	}
	return s, s.RuleConfig(), s.Options(), nil
}

// flagSettings are the settings a command's flags give.
func flagSettings(f *settings.Flags) (*settings.Settings, error) {
	s, err := f.Settings()
	if err != nil {
		return nil, &exitError{code: exitInput, msg: err.Error()}
	}
	return s, nil
}

// repoContext lists the other manifest files of the Git repository when
// only files are named (pre-commit passes the staged ones), so that they
// are judged with the context of a whole-tree run: lint reads them for
// Namespaces, policies, params, CRDs and StorageClasses and reports nothing
// on them. It is empty for directories, stdin, or files outside a
// repository.
func repoContext(args []string, found *discover.Result, s *settings.Settings) []string {
	if len(args) == 0 {
		return nil
	}
	for _, a := range args {
		if fi, err := os.Stat(a); a == manifest.Stdin || err != nil || fi.IsDir() {
			return nil
		}
	}
	root := repoRoot(args[0])
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
		if err != nil || linted[abs] || s.Excluded(f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// repoRoot returns the nearest directory above path that holds .git
// (relative to the current directory where it can be), or "".
func repoRoot(path string) string {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			if wd, err := os.Getwd(); err == nil {
				if rel, err := filepath.Rel(wd, dir); err == nil {
					return rel
				}
			}
			return dir
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
		dir = filepath.Dir(dir)
	}
}

// readInputs expands and reads paths, dropping files the config excludes.
func readInputs(e *env, paths []string, s *settings.Settings) *manifest.Set {
	files, errs := manifest.Expand(paths)
	kept := files[:0]
	for _, f := range files {
		if f == manifest.Stdin || !s.Excluded(f) {
			kept = append(kept, f)
		}
	}
	set := manifest.ReadFiles(kept, e.stdin)
	set.Errs = append(errs, set.Errs...)
	return set
}

// loadObjects reads paths (default ".") and compiles the App specs among
// them; inputErrs are every read and spec problem, for exitFor.
func loadObjects(e *env, paths []string, s *settings.Settings, opts *rules.Options) (set *manifest.Set, objs []*manifest.Object, inputErrs []error) {
	set, objs, inputErrs, _ = discoverObjects(e, paths, s, opts)
	return set, objs, inputErrs
}

// discoverObjects is loadObjects that renders the kustomizations and Helm
// charts among the paths and says what it rendered and skipped.
func discoverObjects(e *env, paths []string, s *settings.Settings, opts *rules.Options) (*manifest.Set, []*manifest.Object, []error, *discover.Result) {
	found := discoverAll(paths, s, opts)
	set := manifest.ReadFiles(found.Files, e.stdin)
	set.Errs = append(found.Errs, set.Errs...)
	for _, u := range found.Units {
		set.Sources = append(set.Sources, u.Source)
	}
	set.DropSources() // lint needs positions and content, not YAML trees
	objs, specErrs := compileSpecs(set.Objects())
	return set, objs, append(set.Errors(), specErrs...), found
}

// discoverAll finds the files, kustomizations and charts under the paths
// (default ".") and renders the latter.
func discoverAll(paths []string, s *settings.Settings, opts *rules.Options) *discover.Result {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	return discover.Discover(paths, discover.Options{KubeVersion: opts.KubeVersion, Excluded: s.Excluded, Chart: s.Chart})
}

// inputsFound summarises for the reports what a run read beside its
// findings: the input problems, what discovery rendered and skipped, and
// the files skipped whole.
func inputsFound(found *discover.Result, inputErrs []error, skipped []manifest.Skipped, s *settings.Settings, listSkipped bool) report.Inputs {
	in := report.Inputs{Errors: inputErrs, Warnings: found.Warnings, Config: s.File, ListSkipped: listSkipped,
		Charts: found.Count("chart"), Kustomizations: found.Count("kustomization")}
	in.Skipped = append(append(in.Skipped, found.Skipped...), skipped...)
	manifest.SortErrors(in.Errors)
	return in
}

// exitFor prints input problems and decides the exit code of a lint run:
// 2 for input problems, 1 for findings at the --fail-on threshold, else 0.
func exitFor(e *env, res *rules.Result, inputErrs []error, threshold rules.Severity) error {
	if len(inputErrs) > 0 {
		printInputErrors(e, inputErrs)
		return &exitError{code: exitInput}
	}
	if failsAt(res, threshold) {
		return &exitError{code: exitFindings}
	}
	return nil
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

// lintObjects runs every registered checker over objs.
func lintObjects(objs []*manifest.Object, files []rules.FileObjects, cfg *rules.Config, opts *rules.Options) (*rules.Result, error) {
	eng := &rules.Engine{Checkers: rules.Registered(), Options: opts, Config: cfg}
	return eng.Run(objs, files)
}

// useColor decides whether text output is coloured: only on a terminal, and
// neither with --no-color, a non-empty NO_COLOR (no-color.org) nor TERM=dumb.
func useColor(e *env, noColor bool) bool {
	if !colorAllowed(noColor, os.Getenv) {
		return false
	}
	f, ok := e.stdout.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// terminalWidth is the width of the terminal the text report goes to, for
// wrapping long findings; 0 (no wrapping) when stdout is not a terminal.
func terminalWidth(e *env) int {
	f, ok := e.stdout.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w < 40 {
		return 0
	}
	return w
}

// colorAllowed is useColor's decision before the terminal check. An empty
// NO_COLOR does not count (no-color.org); TERM=dumb is a terminal without
// escape sequences (Emacs shells, some CI logs).
func colorAllowed(noColor bool, getenv func(string) string) bool {
	return !noColor && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// printInputErrors writes every input problem to stderr, one per line.
func printInputErrors(e *env, errs []error) {
	manifest.SortErrors(errs)
	for _, err := range errs {
		fmt.Fprintln(e.stderr, err)
	}
}

func newLintCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var format string
	var noColor, showSuppressed, listSkipped, repoCtx bool
	cmd := &cobra.Command{
		Use:   "lint [PATH...|-]",
		Short: "Lint manifests offline (files, directories, or - for stdin)",
		Long: `Lint Kubernetes manifests offline: Pod Security Admission as the API server
judges it, ValidatingAdmissionPolicies as the API server evaluates them, and
kiln's own rules. With no PATH, lints the current directory. App specs among the
inputs are compiled first and their output is linted.

Exit codes: 0 no findings at the --fail-on level, 1 findings at that level
(error-level by default), 2 usage or input error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !validFormat(format) {
				return usageErrorf("--format %q: use one of %s", format, strings.Join(report.Formats, ", "))
			}
			given, err := flagSettings(flags)
			if err != nil {
				return err
			}
			s, cfg, opts, err := loadSettings(given, args)
			if err != nil {
				return err
			}
			found := discoverAll(args, s, opts)
			in := lint.Input{Files: found.Files, Units: found.Units, Stdin: e.stdin, Policies: opts.Policies}
			if repoCtx {
				in.Context = repoContext(args, found, s)
			}
			out, err := lint.Run(&rules.Engine{Checkers: rules.Registered(), Options: opts, Config: cfg}, in, format == "junit")
			if err != nil {
				return &exitError{code: exitInput, msg: err.Error()}
			}
			res, inputErrs := out.Result, append(found.Errs, out.Errs...)
			defer res.Close()
			inputs := inputsFound(found, inputErrs, out.Skipped, s, listSkipped)
			inputs.ContextFiles = len(in.Context)
			if err := report.Write(e.stdout, format, res, report.Options{
				Color: useColor(e, noColor), Width: terminalWidth(e), ShowSuppressed: showSuppressed, ToolVersion: version, Inputs: inputs,
			}); err != nil {
				return err
			}
			for _, w := range found.Warnings {
				fmt.Fprintln(e.stderr, w)
			}
			return exitFor(e, res, inputErrs, s.Threshold())
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), settings.Lint, settings.FailOn, settings.Helm)
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+strings.Join(report.Formats, ", "))
	cmd.Flags().BoolVar(&noColor, "no-color", false, "never colour the text output (NO_COLOR in the environment does the same)")
	cmd.Flags().BoolVar(&showSuppressed, "show-suppressed", false, "list suppressed findings in the text output, with their reasons")
	cmd.Flags().BoolVar(&repoCtx, "repo-context", false, "when only files are named (pre-commit's staged files), read the rest of their Git repository for its Namespaces, policies, params, CRDs and StorageClasses, as a whole-tree run would (nothing is reported on those files)")
	cmd.Flags().BoolVar(&listSkipped, "list-skipped", false, "list each skipped file in the text output (not Kubernetes, a kustomize patch nothing applies, a file of a kustomization kiln does not build), with why")
	return cmd
}

func validFormat(f string) bool {
	for _, x := range report.Formats {
		if x == f {
			return true
		}
	}
	return false
}
