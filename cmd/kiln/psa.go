package main

import (
	"github.com/kilnhq/kiln/session/settings"
	"github.com/spf13/cobra"
)

func newPSACmd(e *env) *cobra.Command {
	return group("psa", "Pod Security Admission tools", newPSAPlanCmd(e))
}

func newPSAPlanCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var format string
	cmd := &cobra.Command{
		Use:   "plan [PATH...|-]",
		Short: "Plan Pod Security labels per namespace: the strictest level every workload passes, and what blocks the next",
		Long:  helpText("psa-plan"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := newSession(e, flags, args)
			if err != nil {
				return err
			}
			p, err := s.PlanPSA(args)
			if err != nil {
				return err
			}
			return p.Write(e.stdout, format)
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), []string{"config", "kube-version"})
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	return cmd
}
