package main

import (
	"strings"

	"github.com/kilnhq/kiln/admit/policytest"
	"github.com/kilnhq/kiln/session"
	"github.com/spf13/cobra"
)

func newTestCmd(e *env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "test [PATH...]",
		Short: "Run unit tests of admission policies (kiln-test.yaml, kyverno-test.yaml) as the API server judges them",
		Long:  helpText("test"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := policytest.CheckFormat(format); err != nil {
				return err
			}
			rep, outcome := session.Test(args)
			if err := policytest.Write(e.stdout, format, rep); err != nil {
				return err
			}
			return outcome
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+strings.Join(policytest.Formats, ", "))
	return cmd
}
