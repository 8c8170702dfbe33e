package main

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/report/objdiff"
	"github.com/kilnhq/kiln/session"
	"github.com/kilnhq/kiln/session/settings"
	"github.com/spf13/cobra"
)

func newDiffCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var format, base string
	var noColor bool
	var context, maxSize int
	cmd := &cobra.Command{
		Use:   "diff [--base REV] [PATH...]",
		Short: "Show what a change deploys differently, per app, with the findings it introduces and fixes",
		Long:  helpText("diff"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !strings.Contains(","+strings.Join(objdiff.Formats, ",")+",", ","+format+",") {
				return fmt.Errorf("unknown format %q: use %s", format, strings.Join(objdiff.Formats, ", "))
			}
			if context < 0 || maxSize < 0 {
				return fmt.Errorf("--context and --max-size are counts: 0 or more")
			}
			s, err := newSession(e, flags, args)
			if err != nil {
				return err
			}
			d, err := s.Diff(args, session.DiffOptions{Base: base})
			if err != nil {
				return err
			}
			if err := objdiff.Write(e.stdout, format, d.Report, objdiff.Options{
				Color: report.UseColor(e.stdout, noColor), Context: context, Limit: maxSize,
			}); err != nil {
				return err
			}
			return s.DiffVerdict(d)
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), settings.Lint, settings.Helm, settings.Cache)
	cmd.Flags().StringVar(&base, "base", "", "the Git revision to compare the working tree with (default: the merge base of HEAD and the default branch)")
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+strings.Join(objdiff.Formats, ", "))
	cmd.Flags().IntVar(&context, "context", 3, "unchanged lines shown around each changed line of a multi-line value")
	cmd.Flags().IntVar(&maxSize, "max-size", objdiff.CommentLimit, "most characters of the Markdown output (0: no limit); the apps that do not fit are cut and the cut said")
	cmd.Flags().BoolVar(&noColor, "no-color", false, "never colour the text output (NO_COLOR in the environment does the same)")
	return cmd
}
