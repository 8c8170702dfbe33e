package main

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/fix"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
	"github.com/kilnhq/kiln/settings"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newFixCmd) }

func newFixCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var format string
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
			if runAsUser < 0 || cmd.Flags().Changed("run-as-user") && runAsUser == 0 {
				return usageErrorf("--run-as-user %d: use a non-root user ID (1 or more)", runAsUser)
			}
			for _, p := range only {
				if !fix.MatchesAnyRule(p, checkers.Fixable()) {
					return usageErrorf("--rule %q matches no rule kiln fix repairs; use one of %s", p, strings.Join(checkers.Fixable(), ", "))
				}
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
			for _, a := range args {
				if a == manifest.Stdin {
					return usageErrorf("kiln fix rewrites files in place and cannot read standard input; name files or directories")
				}
			}
			// stdout carries the diff (--dry-run) or a machine-readable report
			// (--format other than text); what was fixed then goes to stderr.
			info, reportTo := e.stdout, e.stdout
			if dryRun {
				info, reportTo = e.stderr, e.stderr
			} else if format != "text" {
				info = e.stderr
			}
			out, err := fix.Run(args, fix.RunOptions{
				Options: fix.Options{Only: only, RunAsUser: runAsUser},
				Lint: func(objs []*manifest.Object, files []rules.FileObjects) (*rules.Result, []error, error) {
					objs, specErrs := compileSpecs(objs)
					res, err := lintObjects(objs, files, cfg, opts)
					return res, specErrs, err
				},
				Skip:   s.Excluded,
				DryRun: dryRun, Diff: e.stdout, Info: info,
			})
			if err != nil {
				return &exitError{code: exitInput, msg: err.Error()}
			}
			if len(out.Remaining.Active()) > 0 && format == "text" {
				fmt.Fprintln(reportTo, "\nFindings that remain (not fixed automatically):")
			}
			if err := report.Write(reportTo, format, out.Remaining, report.Options{
				Color: !dryRun && useColor(e, noColor), ToolVersion: version,
			}); err != nil {
				return err
			}
			return exitFor(e, out.Remaining, out.InputErrs, threshold)
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), settings.Lint, settings.FailOn)
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print a unified diff of the changes on stdout and write nothing (the rest goes to stderr)")
	fl.StringArrayVar(&only, "rule", nil, "fix only findings of this rule ID or glob, e.g. psa/runAsNonRoot or 'psa/*' (repeatable)")
	fl.StringVarP(&format, "format", "f", "text", "format of the remaining findings: "+strings.Join(report.Formats, ", ")+" (other than text, the list of fixes goes to stderr)")
	fl.BoolVar(&noColor, "no-color", false, "never colour the text output")
	fl.Int64Var(&runAsUser, "run-as-user", 0, "set runAsUser to this non-root UID on pods that get runAsNonRoot: true and name no user (instead of a caution)")
	fl.Lookup("fail-on").Usage = "lowest severity of a remaining finding that makes kiln exit 1: " + settings.FailOnValues + " (default error)"
	return cmd
}
