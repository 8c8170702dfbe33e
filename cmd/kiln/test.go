package main

import (
	"strings"

	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/session"
	"github.com/spf13/cobra"
)

func newTestCmd(e *env) *cobra.Command {
	var format string
	var strict bool
	cmd := &cobra.Command{
		Use:   "test [PATH...]",
		Short: "Run unit tests of admission policies (kiln-test.yaml, kyverno-test.yaml) as the API server judges them",
		Long:  helpText("test"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckTestFormat(format); err != nil {
				return err
			}
			rep, outcome := session.Test(args, strict)
			if err := report.WriteTests(e.stdout, format, rep); err != nil {
				return err
			}
			return outcome
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+strings.Join(report.TestFormats, ", "))
	cmd.Flags().BoolVar(&strict, "strict", false, "fail on warnings too (a policy the API server would refuse as written, run with the fields it lacks filled in)")
	return cmd
}
