package main

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/session"
	"github.com/kilnhq/kiln/session/fix"
	"github.com/kilnhq/kiln/session/settings"
	"github.com/spf13/cobra"
)

func newFixCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var format string
	var dryRun, noColor bool
	var only []string
	var runAsUser int64
	cmd := &cobra.Command{
		Use:   "fix [PATH...]",
		Short: "Rewrite manifests in place to fix what can be fixed automatically",
		Long:  helpText("fix"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(format); err != nil {
				return err
			}
			if err := session.CheckFixFlags(only, runAsUser, cmd.Flags().Changed("run-as-user")); err != nil {
				return err
			}
			s, err := newSession(e, flags, args)
			if err != nil {
				return err
			}
			// stdout carries the diff (--dry-run) or a machine-readable report
			// (--format other than text); what was fixed then goes to stderr.
			info, reportTo := e.stdout, e.stdout
			if dryRun {
				info, reportTo = e.stderr, e.stderr
			} else if format != "text" {
				info = e.stderr
			}
			out, err := s.Fix(args, session.FixOptions{
				Options: fix.Options{Only: only, RunAsUser: runAsUser},
				DryRun:  dryRun, Diff: e.stdout, Info: info,
			})
			if err != nil {
				return err
			}
			if len(out.Remaining.Active()) > 0 && format == "text" {
				fmt.Fprintln(reportTo, "\nFindings that remain (not fixed automatically):")
			}
			if err := report.Write(reportTo, format, out.Remaining, report.Options{
				Color: !dryRun && report.UseColor(e.stdout, noColor), ToolVersion: version,
			}); err != nil {
				return err
			}
			for _, w := range out.Warnings {
				fmt.Fprintln(e.stderr, w)
			}
			return s.Verdict(out.Remaining, out.InputErrs)
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), settings.Lint, settings.FailOn, settings.Helm)
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print a unified diff of the changes on stdout and write nothing (the rest goes to stderr)")
	fl.StringArrayVar(&only, "rule", nil, "fix only findings of this rule ID or glob, e.g. psa/runAsNonRoot or 'psa/*' (repeatable)")
	fl.StringVarP(&format, "format", "f", "text", "format of the remaining findings: "+strings.Join(report.Formats, ", ")+" (other than text, the list of fixes goes to stderr)")
	fl.BoolVar(&noColor, "no-color", false, "never colour the text output")
	fl.Int64Var(&runAsUser, "run-as-user", 0, "set runAsUser to this non-root UID on pods that get runAsNonRoot: true and name no user (instead of a caution)")
	fl.Lookup("fail-on").Usage = "lowest severity of a remaining finding that makes kiln exit 1: " + settings.FailOnValues + " (default error)"
	return cmd
}
