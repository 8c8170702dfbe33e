package main

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/session"
	"github.com/kilnhq/kiln/session/settings"
	"github.com/spf13/cobra"
)

func newLintCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var format string
	var noColor, showSuppressed, listSkipped, repoCtx bool
	cmd := &cobra.Command{
		Use:   "lint [PATH...|-]",
		Short: "Lint manifests offline (files, directories, or - for stdin)",
		Long:  helpText("lint"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(format); err != nil {
				return err
			}
			s, err := newSession(e, flags, args)
			if err != nil {
				return err
			}
			out, err := s.Lint(args, session.LintOptions{RepoContext: repoCtx, Objects: format == "junit", ListSkipped: listSkipped})
			if err != nil {
				return err
			}
			defer out.Result.Close()
			if err := report.Write(e.stdout, format, out.Result, report.Options{
				Color: report.UseColor(e.stdout, noColor), Width: report.TerminalWidth(e.stdout), ShowSuppressed: showSuppressed, ToolVersion: version, Inputs: out.Inputs,
			}); err != nil {
				return err
			}
			for _, w := range out.Warnings {
				fmt.Fprintln(e.stderr, w)
			}
			return s.Verdict(out.Result, out.Inputs.Errors)
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), settings.Lint, settings.FailOn, settings.Helm, settings.Adopt, settings.Cache)
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+strings.Join(report.Formats, ", "))
	cmd.Flags().BoolVar(&noColor, "no-color", false, "never colour the text output (NO_COLOR in the environment does the same)")
	cmd.Flags().BoolVar(&showSuppressed, "show-suppressed", false, "list suppressed findings in the text output, with their reasons")
	cmd.Flags().BoolVar(&repoCtx, "repo-context", false, "when only files are named (pre-commit's staged files), read the rest of their Git repository for its Namespaces, policies, params, CRDs and StorageClasses, as a whole-tree run would (nothing is reported on those files)")
	cmd.Flags().BoolVar(&listSkipped, "list-skipped", false, "list each skipped file in the text output (not Kubernetes, a kustomize patch nothing applies, a file of a kustomization kiln does not build), with why")
	return cmd
}
