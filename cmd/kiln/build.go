package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/compiler/outdir"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/settings"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newBuildCmd) }

func newBuildCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var outDir string
	var check, noLint, argocd bool
	cmd := &cobra.Command{
		Use:   "build [PATH...] [-o DIR]",
		Short: "Compile App specs into Kubernetes manifests, lint them, print or write them",
		Long: `Compile the App specs (apiVersion kiln.dev/v1alpha1, kind App) among PATH
(default: the current directory) into Kubernetes objects, lint the result, and
print it as one YAML stream, or with -o write one file per object to
DIR/<namespace>/<kind>-<name>.yaml. Writes are atomic; files a previous build
wrote that are no longer produced are removed (kiln lists what it wrote in
DIR/` + outdir.Manifest + `; other files are never touched). Other manifests among
the inputs are linted with the compiled objects as context but not emitted.

With --check nothing is written: exit 1 and a summary if DIR is out of date
(stale, missing or extra files, or temporary files a killed build left, which
the next build removes).
Warnings (the compiler's, and lint findings on the compiled objects) are
printed on stderr. Findings at the --fail-on level (default error) stop the
build: exit 1, nothing printed or written. --no-lint skips the lint.
--argocd annotates the objects with Argo CD sync waves.
A file of apiVersion kiln.dev/* or kind App that is not a valid spec stops the
build (exit 2) and nothing in DIR changes: a typo in a spec's header never
removes the app's files.

Exit codes: 0 ok, 1 findings at --fail-on or stale output (--check), 2 usage error or bad spec.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if check && outDir == "" {
				return usageErrorf("--check needs -o DIR: the directory to compare with")
			}
			given, err := flagSettings(flags)
			if err != nil {
				return err
			}
			s, cfg, opts, err := loadSettings(given, args)
			if err != nil {
				return err
			}
			threshold := s.Threshold()
			if len(args) == 0 {
				args = []string{"."}
			}
			set := readBuildInputs(e, args, cfg, outDir)
			if errs := set.Errors(); len(errs) > 0 {
				printInputErrors(e, errs)
				return &exitError{code: exitInput}
			}
			if errs := compiler.MisnamedSpecs(set.Objects()); len(errs) > 0 {
				printInputErrors(e, errs)
				return &exitError{code: exitInput}
			}
			x := compiler.Expand(set.Objects())
			if argocd {
				if err := x.AddSyncWaves(); err != nil {
					return &exitError{code: exitInput, msg: err.Error()}
				}
			}
			all, compiled, warns := x.All, x.Compiled, x.Warnings
			errs := append(x.Errors, compiler.OutputOrder(compiled)...)
			if len(errs) > 0 {
				printInputErrors(e, errs)
				return &exitError{code: exitInput}
			}
			for _, w := range warns {
				fmt.Fprintln(e.stderr, warningLine(w))
			}
			refuse := len(warns) > 0 && threshold != 0 && threshold <= rules.Warning
			if len(compiled) == 0 {
				return usageErrorf("no App specs (apiVersion %s, kind %s) among the inputs", compiler.APIVersion, compiler.Kind)
			}
			files, err := outdir.Files(compiled)
			if err != nil {
				return &exitError{code: exitInput, msg: err.Error()}
			}
			if !noLint {
				res, err := lintObjects(all, fileObjects(set), cfg, opts)
				if err != nil {
					return &exitError{code: exitInput, msg: err.Error()}
				}
				own := res.OnObjects(compiled)
				if len(own.Findings) > own.Summary.Suppressed {
					if err := report.Write(e.stderr, "text", own, report.Options{ToolVersion: version}); err != nil {
						return err
					}
				}
				refuse = refuse || failsAt(own, threshold)
			}
			if refuse {
				return &exitError{code: exitFindings, msg: fmt.Sprintf("build refused: findings at --fail-on %s (fix the spec, or use --fail-on / --no-lint)", failOnName(threshold))}
			}
			switch {
			case check:
				d, err := outdir.Compare(outDir, files)
				if err != nil {
					return &exitError{code: exitInput, msg: err.Error()}
				}
				if !d.Empty() {
					d.Print(e.stderr, outDir)
					return &exitError{code: exitFindings}
				}
				return nil
			case outDir != "":
				if err := outdir.Write(outDir, files); err != nil {
					return &exitError{code: exitInput, msg: err.Error()}
				}
				return nil
			}
			return manifest.Write(e.stdout, compiled)
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), settings.Lint, settings.FailOn)
	fl := cmd.Flags()
	fl.StringVarP(&outDir, "output", "o", "", "write one file per object under DIR instead of printing the stream")
	fl.BoolVar(&check, "check", false, "write nothing; exit 1 if the files under -o DIR are not what the build would write")
	fl.BoolVar(&noLint, "no-lint", false, "do not lint the compiled objects")
	fl.BoolVar(&argocd, "argocd", false, "annotate the objects with Argo CD sync waves ("+compiler.SyncWaveAnnotation+"): Namespace -2, ConfigMaps and Services -1, PVCs and workloads 0")
	fl.Lookup("fail-on").Usage = "lowest severity that stops the build (exit 1, nothing written): " + settings.FailOnValues + " (default error)"
	return cmd
}

// readBuildInputs reads the inputs, leaving out the output directory so a
// previous build's files are not read back as inputs.
func readBuildInputs(e *env, paths []string, cfg *rules.Config, outDir string) *manifest.Set {
	files, errs := manifest.Expand(paths)
	kept := files[:0]
	absOut := ""
	if outDir != "" {
		absOut, _ = filepath.Abs(outDir)
	}
	for _, f := range files {
		if f != manifest.Stdin && (cfg.Excluded(f) || within(absOut, f)) {
			continue
		}
		kept = append(kept, f)
	}
	set := manifest.ReadFiles(kept, e.stdin)
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

// warningLine formats a compiler warning as file:line:col: warning: message.
func warningLine(err error) string {
	if me, ok := err.(*manifest.Error); ok {
		return fmt.Sprintf("%s: warning: %s", me.Pos, me.Msg)
	}
	return "warning: " + err.Error()
}

func failOnName(s rules.Severity) string {
	if s == rules.Warning {
		return "warning"
	}
	return "error"
}
