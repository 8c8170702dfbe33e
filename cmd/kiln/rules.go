package main

import (
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/session"
	"github.com/spf13/cobra"
)

func newRulesCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rules [PATH...]",
		Short: "List every rule: ID, default severity, summary (with PATHs: also the ValidatingAdmissionPolicies there)",
		RunE: func(cmd *cobra.Command, args []string) error {
			all, err := session.Rules(args, e.stdin)
			if err != nil {
				return err
			}
			return report.WriteRules(e.stdout, all)
		},
	}
}

func newExplainCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "explain RULE-ID [PATH...]",
		Short: "Explain a rule: rationale, a failing and a passing example, how to suppress it (policy/<name> with the PATHs holding the policy)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := session.Rule(args[0], args[1:], e.stdin)
			if err != nil {
				return err
			}
			report.WriteExplain(e.stdout, r)
			return nil
		},
	}
}
