package main

import (
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/session"
	"github.com/spf13/cobra"
)

func newReportCmd(e *env) *cobra.Command {
	var format string
	merge := &cobra.Command{
		Use:   "merge [-f FORMAT] SHARD.json...",
		Short: "Combine the -f json reports of every kiln lint --shard I/N run into the whole run's report (exit code as kiln lint's)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := session.Merge(args, e.stdin)
			if err == nil {
				err = report.Write(e.stdout, format, l.Result, report.Options{ToolVersion: version, Inputs: l.Inputs})
			}
			if err != nil {
				return err
			}
			return l.Verdict()
		},
	}
	merge.Flags().StringVarP(&format, "format", "f", "json", "output format (as kiln lint's)")
	cmd := &cobra.Command{Use: "report", Short: "Work with kiln lint's reports: merge the shards of a run"}
	cmd.AddCommand(merge)
	return cmd
}
