package main

import (
	"github.com/kilnhq/kiln/cmd/kiln/internal/krm"
	"github.com/spf13/cobra"
)

func newFnCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "fn",
		Short: "KRM function: a ResourceList on stdin, one on stdout (validator or generator)",
		Long:  helpText("fn"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return krm.Run(e.stdin, e.stdout, e.stderr) },
	}
}
