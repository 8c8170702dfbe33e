package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kilnhq/kiln/fix"
	"github.com/kilnhq/kiln/internal/atomicfile"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newFixCmd) }

func newFixCmd(e *env) *cobra.Command {
	var lf lintFlags
	var format, failOn string
	var dryRun, noColor bool
	var only []string
	var runAsUser int64
	cmd := &cobra.Command{
		Use:   "fix [PATH...]",
		Short: "Rewrite manifests in place to fix what can be fixed automatically",
		Long: `Rewrite manifests in place so that the findings kiln can repair go away:
  - the restricted Pod Security securityContext on the pod and every container
    (psa/runAsNonRoot, psa/seccompProfile_restricted, psa/seccompProfile_baseline,
    psa/allowPrivilegeEscalation, psa/capabilities_restricted,
    psa/capabilities_baseline: added capabilities the level forbids are removed);
  - a helper (proxy, log shipper, agent) in containers[] of a Job, CronJob or
    JobSet pod moved to a native sidecar (sidecar/classic-in-job, 1.29+);
  - a removed apiVersion whose replacement has the same schema (api/removed).
Only what the linter reports is fixed: namespace Pod Security levels,
kiln.dev/ignore annotations and .kiln.yaml apply as in kiln lint. Only failing
values change; comments, key order, quoting and other documents keep their bytes.
Files with a parse error and JSON files are left unchanged. Writes are atomic
and keep the file mode. Afterwards the findings that remain are listed.

Changes that can stop a pod from starting are listed per object as cautions:
runAsNonRoot: true on a pod that names no runAsUser makes the kubelet refuse
an image that runs as root. --run-as-user N sets runAsUser: N on those pods
instead (N > 0, a UID the images can run as).

Exit codes, as kiln lint: 0 no remaining finding at the --fail-on level, 1 some
remain (error-level by default), 2 usage or input error (including a file that
could not be parsed or written).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !validFormat(format) {
				return usageErrorf("--format %q: use one of %s", format, strings.Join(report.Formats, ", "))
			}
			threshold, err := parseFailOn(failOn)
			if err != nil {
				return err
			}
			if runAsUser < 0 || cmd.Flags().Changed("run-as-user") && runAsUser == 0 {
				return usageErrorf("--run-as-user %d: use a non-root user ID (1 or more)", runAsUser)
			}
			for _, p := range only {
				if !matchesFixable(p) {
					return usageErrorf("--rule %q matches no rule kiln fix repairs; use one of %s", p, strings.Join(fix.Rules(), ", "))
				}
			}
			cfg, opts, err := lf.load()
			if err != nil {
				return err
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			for _, a := range args {
				if a == manifest.Stdin {
					return usageErrorf("kiln fix rewrites files in place and cannot read standard input; name files or directories")
				}
			}
			paths, inputErrs := manifest.Expand(args)
			var files []*fix.File
			for _, p := range paths {
				if cfg.Excluded(p) {
					continue
				}
				f := fix.ReadFile(p)
				inputErrs = append(inputErrs, f.Errs...)
				files = append(files, f)
			}
			res, specErrs, err := lintFiles(files, nil, cfg, opts)
			if err != nil {
				return &exitError{code: exitInput, msg: err.Error()}
			}
			inputErrs = append(inputErrs, specErrs...)

			results := fix.Fix(files, res.Findings, fix.Options{KubeVersion: opts.KubeVersion, Only: only, RunAsUser: runAsUser})
			// stdout carries the diff (--dry-run) or a machine-readable report
			// (--format other than text); what was fixed then goes to stderr.
			info, reportTo := e.stdout, e.stdout
			if dryRun {
				info, reportTo = e.stderr, e.stderr
			} else if format != "text" {
				info = e.stderr
			}
			after := map[*fix.File][]byte{}
			nfixes, nfiles := 0, 0
			for _, r := range results {
				if r.Err != nil {
					inputErrs = append(inputErrs, fmt.Errorf("%v (file left unchanged)", r.Err))
					continue
				}
				if r.Skipped != "" {
					fmt.Fprintf(info, "%s: %s\n", r.File.Path, r.Skipped)
				}
				if !r.Changed() {
					continue
				}
				if dryRun {
					io.WriteString(e.stdout, fix.UnifiedDiff(r.File.Path, r.File.Src, r.Output))
				} else if err := atomicfile.WriteFile(r.File.Path, r.Output, r.File.Mode); err != nil {
					inputErrs = append(inputErrs, fmt.Errorf("%v (file left unchanged)", err))
					continue
				}
				after[r.File] = r.Output
				nfiles++
				nfixes += len(r.Changes)
				printChanges(info, r)
			}
			verb := "fixed"
			if dryRun {
				verb = "would fix"
			}
			fmt.Fprintf(info, "kiln fix: %s %d %s in %d %s\n", verb, nfixes, plural(nfixes, "problem", "problems"), nfiles, plural(nfiles, "file", "files"))

			// Lint the result: what remains is what kiln cannot fix (or was not asked to).
			res, _, err = lintFiles(files, after, cfg, opts)
			if err != nil {
				return &exitError{code: exitInput, msg: err.Error()}
			}
			if len(res.Active()) > 0 && format == "text" {
				fmt.Fprintln(reportTo, "\nFindings that remain (not fixed automatically):")
			}
			if err := report.Write(reportTo, format, res, report.Options{
				Color: !dryRun && useColor(e, noColor), ToolVersion: version,
			}); err != nil {
				return err
			}
			return exitFor(e, res, inputErrs, threshold)
		},
	}
	lf.register(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print a unified diff of the changes on stdout and write nothing (the rest goes to stderr)")
	fl.StringArrayVar(&only, "rule", nil, "fix only findings of this rule ID or glob, e.g. psa/runAsNonRoot or 'psa/*' (repeatable)")
	fl.StringVarP(&format, "format", "f", "text", "format of the remaining findings: "+strings.Join(report.Formats, ", ")+" (other than text, the list of fixes goes to stderr)")
	fl.BoolVar(&noColor, "no-color", false, "never colour the text output")
	fl.Int64Var(&runAsUser, "run-as-user", 0, "set runAsUser to this non-root UID on pods that get runAsNonRoot: true and name no user (instead of a caution)")
	fl.StringVar(&failOn, "fail-on", "error", "lowest severity of a remaining finding that makes kiln exit 1: "+failOnValues)
	return cmd
}

// lintFiles lints the files' objects, reading a file's content from after
// when it has an entry there (the fixed content, not yet or never written).
func lintFiles(files []*fix.File, after map[*fix.File][]byte, cfg *rules.Config, opts *rules.Options) (*rules.Result, []error, error) {
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
	objs, specErrs := compileSpecs(objs, opts)
	res, err := lintObjects(objs, fo, cfg, opts)
	return res, specErrs, err
}

// printChanges lists what was fixed in one file, one line per change.
func printChanges(w io.Writer, r *fix.Result) {
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

// matchesFixable reports whether a --rule pattern names at least one fixable rule.
func matchesFixable(p string) bool {
	for _, id := range fix.Rules() {
		if fix.MatchRule(p, id) {
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
