package main

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/cel"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newRulesCmd, newExplainCmd) }

func newRulesCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rules [PATH...]",
		Short: "List every rule: ID, default severity, summary (with PATHs: also the ValidatingAdmissionPolicies there)",
		RunE: func(cmd *cobra.Command, args []string) error {
			all, err := rulesInScope(args)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RULE\tSEVERITY\tSUMMARY")
			for _, r := range all {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Severity, r.Summary)
			}
			return tw.Flush()
		},
	}
}

func newExplainCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "explain RULE-ID [PATH...]",
		Short: "Explain a rule: rationale, a failing and a passing example, how to suppress it (policy/<name> with the PATHs holding the policy)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			all, err := rulesInScope(args[1:])
			if err != nil {
				return err
			}
			var r *rules.Rule
			for _, x := range all {
				if x.ID == args[0] {
					r = x
				}
			}
			if r == nil {
				return usageErrorf("unknown rule %q; `kiln rules` lists them", args[0])
			}
			writeExplain(e, r)
			return nil
		},
	}
}

// rulesInScope returns the registered rules plus, when paths are given, one
// rule per ValidatingAdmissionPolicy found under them, sorted by ID.
func rulesInScope(paths []string) ([]*rules.Rule, error) {
	all := rules.AllRules()
	if len(paths) == 0 {
		return all, nil
	}
	policies, err := cel.PolicyRules(paths)
	if err != nil {
		return nil, &exitError{code: exitInput, msg: err.Error()}
	}
	all = append(all, policies...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, nil
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
