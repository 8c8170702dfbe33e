package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kilnhq/kiln/manifest"
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

// everyRule returns every rule kiln can report, sorted by ID: the registered
// checkers' rules and the engine's kiln/unused-ignore.
func everyRule() []*rules.Rule {
	all := append(rules.AllRules(), rules.UnusedIgnoreRule)
	sort.SliceStable(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// rulesInScope returns every rule kiln can report plus, when paths are
// given, one rule per ValidatingAdmissionPolicy found under them, sorted by ID.
func rulesInScope(paths []string) ([]*rules.Rule, error) {
	all := everyRule()
	if len(paths) == 0 {
		return all, nil
	}
	set := manifest.Read(paths, nil)
	if errs := set.Errors(); len(errs) > 0 {
		manifest.SortErrors(errs)
		return nil, &exitError{code: exitInput, msg: errors.Join(errs...).Error()}
	}
	all = append(all, cel.PolicyRules(set.Objects())...)
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
		fmt.Fprintf(w, "\nFails%s:\n\n%s\n", exampleRun(r.Fail), indent(r.Fail))
	}
	if r.Pass != "" {
		fmt.Fprintf(w, "\nPasses%s:\n\n%s\n", exampleRun(r.Pass), indent(r.Pass))
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

// exampleFlags returns the kiln lint flags an example's header comment
// names ("# kiln lint --kube-version 1.27"): the example behaves as
// labelled when linted with them.
func exampleFlags(example string) []string {
	var flags []string
	for _, line := range strings.Split(example, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(line, "#")), "kiln lint"); ok {
			flags = append(flags, strings.Fields(rest)...)
		}
	}
	return flags
}

// exampleRun is the command an example with flags is linted with, for its
// heading (" (kiln lint --kube-version 1.27 -)"); none for the default flags.
func exampleRun(example string) string {
	flags := exampleFlags(example)
	if len(flags) == 0 {
		return ""
	}
	return " (kiln lint " + strings.Join(flags, " ") + " -)"
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
