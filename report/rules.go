package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kilnhq/kiln/rules"
)

// WriteRules writes the table kiln rules prints: ID, default severity
// ("(off)" after it for a rule off unless the config turns it on),
// summary.
func WriteRules(w io.Writer, all []*rules.Rule) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSEVERITY\tSUMMARY")
	for _, r := range all {
		sev := r.Severity.String()
		if r.Off {
			sev += " (off)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, sev, r.Summary)
	}
	return tw.Flush()
}

// WriteExplain writes what kiln explain prints of a rule: its summary and
// doc, its failing and passing examples (each headed by the command it
// behaves as labelled with), and how to suppress it.
func WriteExplain(w io.Writer, r *rules.Rule) {
	fmt.Fprintf(w, "%s (%s)\n\n%s\n", r.ID, r.Severity, r.Summary)
	if r.Off {
		fmt.Fprintf(w, "\nOff by default: turn it on in .kiln.yaml with rules: {%s: on}.\n", r.ID)
	}
	if r.Doc != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(r.Doc))
	}
	if r.Fail != "" {
		fmt.Fprintf(w, "\nFails%s:\n\n%s\n", exampleRun(r.Fail), indentExample(r.Fail))
	}
	if r.Pass != "" {
		fmt.Fprintf(w, "\nPasses%s:\n\n%s\n", exampleRun(r.Pass), indentExample(r.Pass))
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

// ExampleFlags returns the kiln lint flags an example's header comment
// names ("# kiln lint --kube-version 1.27"): the example behaves as
// labelled when linted with them.
func ExampleFlags(example string) []string {
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
	flags := ExampleFlags(example)
	if len(flags) == 0 {
		return ""
	}
	return " (kiln lint " + strings.Join(flags, " ") + " -)"
}

func indentExample(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}
