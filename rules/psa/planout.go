package psa

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/internal/plural"
	"k8s.io/pod-security-admission/api"
)

// Formats are the output formats of a plan.
var Formats = []string{"text", "json"}

// Write writes the plan in format, one of Formats.
func (p *Plan) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return p.WriteText(w)
	case "json":
		return p.WriteJSON(w)
	}
	return fmt.Errorf("--format %q: use text or json", format)
}

// WriteJSON writes the plan as indented JSON (maps with sorted keys).
func (p *Plan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// rank orders levels: privileged 0, baseline 1, restricted 2, unknown -1.
func rank(level string) int {
	switch level {
	case string(api.LevelPrivileged):
		return 0
	case string(api.LevelBaseline):
		return 1
	case string(api.LevelRestricted):
		return 2
	}
	return -1
}

// WriteText writes the plan for people: per namespace its level, the
// kubectl commands of each step, and the checks that block the next level.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Pod Security plan for %s\n", p.Target)
	if len(p.Namespaces) == 0 {
		b.WriteString("\nno namespaces and no workloads in the input\n")
	}
	for _, ns := range p.Namespaces {
		where := "not in the input"
		if ns.Defined != nil {
			where = ns.Defined.String()
		}
		fmt.Fprintf(&b, "\nnamespace %s (%s)\n", ns.Name, where)
		writeLabelsText(&b, ns)
		writePassesText(&b, ns)
		writeRejectedText(&b, ns)
		writeFixText(&b, ns)
		writeStepsText(&b, ns)
		writeBlockingText(&b, ns)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLabelsText says what the namespace is labelled with now and, for
// one neither the input nor the config declares, the level assumed.
func writeLabelsText(b *strings.Builder, ns NamespacePlan) {
	switch {
	case ns.Configured:
		fmt.Fprintf(b, "  now:      %s (psa.namespaces.%s in the config)\n", labelList(ns.Current, " "), ns.Name)
	case len(ns.Current) == 0:
		b.WriteString("  now:      no pod-security labels (the cluster default applies: privileged unless configured)\n")
	default:
		fmt.Fprintf(b, "  now:      %s\n", labelList(ns.Current, " "))
	}
	switch {
	case ns.Assumed == nil:
	case systemNamespaces[ns.Name]:
		fmt.Fprintf(b, "  assumed:  privileged, as a cluster leaves %s unlabelled; set psa.namespaces.%s to judge it at a level\n", ns.Name, ns.Name)
	default:
		fmt.Fprintf(b, "  assumed:  kiln lint judges it at %s; declare the Namespace with pod-security.kubernetes.io labels, or set psa.namespaces.%s\n",
			labelList(ns.Assumed, " "), ns.Name)
	}
}

// writePassesText says the level every workload passes and how many
// already pass the next one.
func writePassesText(b *strings.Builder, ns NamespacePlan) {
	ready := 0
	for _, wp := range ns.Workloads {
		if len(wp.Blocking) == 0 {
			ready++
		}
	}
	switch {
	case len(ns.Workloads) == 0:
		fmt.Fprintf(b, "  passes:   %s %s (no workloads)\n", ns.Level, ns.LevelVersion)
	case ns.Next == "":
		fmt.Fprintf(b, "  passes:   %s %s (all %d %s)\n", ns.Level, ns.LevelVersion, len(ns.Workloads), plural.Word(len(ns.Workloads), "workload", "workloads"))
	default:
		fmt.Fprintf(b, "  passes:   %s %s (%d %s; %d already %s %s %s)\n", ns.Level, ns.LevelVersion,
			len(ns.Workloads), plural.Word(len(ns.Workloads), "workload", "workloads"), ready, plural.Word(ready, "passes", "pass"), ns.Next, ns.NextVersion)
	}
}

// writeRejectedText warns of the workloads whose pods the enforced (or
// assumed) level rejects today.
func writeRejectedText(b *strings.Builder, ns NamespacePlan) {
	cur := ns.Current[api.EnforceLevelLabel]
	if ns.Assumed != nil {
		cur = ns.Assumed[api.EnforceLevelLabel]
	}
	rejected := 0
	for _, wp := range ns.Workloads {
		if rank(wp.Level) < rank(cur) {
			rejected++
		}
	}
	if rejected == 0 {
		return
	}
	n := fmt.Sprintf("%d %s", rejected, plural.Word(rejected, "workload", "workloads"))
	if ns.Assumed != nil {
		fmt.Fprintf(b, "  warning:  at the assumed enforce=%s, kiln lint reports the pods of %s as rejected\n", cur, n)
	} else {
		fmt.Fprintf(b, "  warning:  enforce=%s today rejects the pods of %s\n", cur, n)
	}
}

// writeFixText says what kiln fix does for the next level: reach it, or
// repair some of the checks that block it.
func writeFixText(b *strings.Builder, ns NamespacePlan) {
	if ns.FixReaches != "" {
		fmt.Fprintf(b, "  kiln fix: reaches %s (it repairs every check that blocks it, below); run kiln fix (and read its cautions), then plan again\n", ns.FixReaches)
	} else if n, all := fixableCount(ns); n > 0 {
		fmt.Fprintf(b, "  kiln fix: repairs %d of the %d checks that block %s %s\n", n, all, ns.Next, ns.NextVersion)
	}
}

// writeStepsText lists the rollout's steps: a kubectl label command each,
// or the labels to set where the Namespace is in the input.
func writeStepsText(b *strings.Builder, ns NamespacePlan) {
	if ns.LabelsAt != nil {
		b.WriteString("  steps (the Namespace is in the input: edit its labels there, a GitOps controller reverts kubectl label):\n")
	} else {
		b.WriteString("  steps:\n")
	}
	for i, s := range ns.Steps {
		if ns.LabelsAt != nil {
			fmt.Fprintf(b, "    %d. %-10s %s: set labels %s\n", i+1, s.Mode, ns.LabelsAt, labelList(s.Labels, " "))
		} else {
			fmt.Fprintf(b, "    %d. %-10s kubectl label --overwrite namespace %s %s\n", i+1, s.Mode, ns.Name, labelList(s.Labels, " "))
		}
		fmt.Fprintf(b, "       %-10s %s\n", "", s.Why)
	}
}

// writeBlockingText lists, per workload, the checks that block the next
// level (none when the namespace is at the strictest).
func writeBlockingText(b *strings.Builder, ns NamespacePlan) {
	if ns.Next == "" {
		return
	}
	fmt.Fprintf(b, "  blocking %s %s:\n", ns.Next, ns.NextVersion)
	for _, wp := range ns.Workloads {
		if len(wp.Blocking) == 0 {
			continue
		}
		fmt.Fprintf(b, "    %s (%s), passes %s\n", wp.Object, wp.Pos, wp.Level)
		for _, bl := range wp.Blocking {
			fixable := ""
			if bl.Fixable {
				fixable = "  (kiln fix)"
			}
			fmt.Fprintf(b, "      %s  %s  %s%s\n", bl.Pos, bl.Rule, bl.Message, fixable)
		}
	}
}

// fixableCount counts the blocking checks kiln fix repairs, and all of them.
func fixableCount(ns NamespacePlan) (fixable, all int) {
	for _, wp := range ns.Workloads {
		for _, bl := range wp.Blocking {
			all++
			if bl.Fixable {
				fixable++
			}
		}
	}
	return fixable, all
}

// labelList formats labels as k=v, sorted by key.
func labelList(labels map[string]string, sep string) string {
	keys := slices.Sorted(maps.Keys(labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, sep)
}
