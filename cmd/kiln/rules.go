package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/kilnhq/kiln/rules"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newRulesCmd, newExplainCmd) }

func newRulesCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rules",
		Short: "List every rule: ID, default severity, summary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RULE\tSEVERITY\tSUMMARY")
			for _, r := range rules.AllRules() {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Severity, r.Summary)
			}
			return tw.Flush()
		},
	}
}

func newExplainCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "explain RULE-ID",
		Short: "Explain a rule: rationale, a failing and a passing example, how to suppress it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := rules.Lookup(args[0])
			if r == nil {
				return usageErrorf("unknown rule %q; `kiln rules` lists them", args[0])
			}
			writeExplain(e, r)
			return nil
		},
	}
}

func writeExplain(e *env, r *rules.Rule) {
	w := e.stdout
	fmt.Fprintf(w, "%s (%s)\n\n%s\n", r.ID, r.Severity, r.Summary)
	if r.Doc != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(r.Doc))
	}
	if r.Fail != "" {
		fmt.Fprintf(w, "\nFails:\n\n%s\n", indent(r.Fail))
	}
	if r.Pass != "" {
		fmt.Fprintf(w, "\nPasses:\n\n%s\n", indent(r.Pass))
	}
	fmt.Fprintf(w, `
Suppress:

    # on one object
    metadata:
      annotations:
        %s: "%s # reason"

    # everywhere, in .kiln.yaml
    rules:
      %s: off
`, rules.IgnoreAnnotation, r.ID, r.ID)
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}
