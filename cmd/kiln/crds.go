package main

import (
	"bufio"
	"fmt"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/admit/catalog"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

func newCRDsCmd(e *env) *cobra.Command {
	return group("crds", "kiln's built-in catalog of CustomResourceDefinitions", newCRDsListCmd(e), newCRDsExportCmd(e))
}

func newCRDsListCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the catalog: each API group's kinds, project and version, and the projects it has no source for",
		Long: `List kiln's built-in catalog of CustomResourceDefinitions, one line per API group and project
version: the group, its kinds, the project and version (the default one marked; a .kiln.yaml pins
another with catalog: {PROJECT: VERSION}), and where the CRDs were read. Projects the catalog has no
offline source for are listed last, as unavailable, with why.

kiln judges a custom resource by its CRD in the input, else by those the crds: setting names, else by
the catalog's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ix, err := catalog.Load()
			if err != nil {
				return err
			}
			w := bufio.NewWriter(e.stdout)
			fmt.Fprintf(w, "%-34s %-28s %-24s %s\n", "GROUP", "PROJECT", "VERSION", "KINDS")
			type line struct{ group, project, version, kinds, source string }
			var lines []line
			for _, en := range ix.Entries {
				byGroup := map[string][]string{}
				for _, c := range en.CRDs {
					byGroup[c.Group] = append(byGroup[c.Group], c.Kind)
				}
				version := en.Version
				if en.Default {
					version += " (default)"
				}
				for g, kinds := range byGroup {
					sort.Strings(kinds)
					lines = append(lines, line{g, en.Project, version, strings.Join(kinds, ", "), en.Source})
				}
			}
			sort.SliceStable(lines, func(i, j int) bool { return lines[i].group < lines[j].group })
			for _, l := range lines {
				fmt.Fprintf(w, "%-34s %-28s %-24s %s\n", l.group, l.project, l.version, l.kinds)
			}
			sources := map[string]string{}
			var order []string
			for _, en := range ix.Entries {
				k := en.Project + " " + en.Version
				sources[k] = en.Source
				order = append(order, k)
			}
			fmt.Fprintln(w, "\nSources:")
			for _, k := range order {
				fmt.Fprintf(w, "  %s: %s\n", k, sources[k])
			}
			if len(ix.Unavailable) > 0 {
				fmt.Fprintln(w, "\nUnavailable:")
				for _, u := range ix.Unavailable {
					fmt.Fprintf(w, "  %s (%s): unavailable: %s\n", u.Project, strings.Join(u.Groups, ", "), u.Why)
				}
			}
			return w.Flush()
		},
	}
}

func newCRDsExportCmd(e *env) *cobra.Command {
	var pins map[string]string
	cmd := &cobra.Command{
		Use:   "export GROUP...",
		Short: "Print the catalog's CRDs of the API groups as YAML (to install in a test cluster or an editor's schema store)",
		Long: `Print the catalog's CustomResourceDefinitions of each API group named, as YAML documents: for each
kind, the CRD kiln lint judges it by (the project's default version, or the one --version pins). The CRDs
are as their projects publish them without their descriptions.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, groups []string) error {
			ix, err := catalog.Load()
			if err != nil {
				return err
			}
			if err := ix.CheckPins(pins); err != nil {
				return fmt.Errorf("--version: %w", err)
			}
			w := bufio.NewWriter(e.stdout)
			first := true
			for _, g := range groups {
				crds := ix.Group(g)
				if len(crds) == 0 {
					return fmt.Errorf("the catalog holds no CRDs of the group %q (kiln crds list lists them)", g)
				}
				seen := map[string]bool{}
				for _, c := range crds {
					if seen[c.Kind] {
						continue
					}
					seen[c.Kind] = true
					chosen, _ := ix.Choose(g, c.Kind, pins)
					js, err := chosen.JSON()
					if err != nil {
						return err
					}
					y, err := yaml.JSONToYAML(js)
					if err != nil {
						return err
					}
					if !first {
						w.WriteString("---\n")
					}
					first = false
					fmt.Fprintf(w, "# %s, from kiln's catalog: %s (%s)\n", chosen.Name(), chosen.Entry, chosen.Entry.Source)
					w.Write(y)
				}
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringToStringVar(&pins, "version", nil, "PROJECT=VERSION: the version of a project to print where the catalog holds several (repeatable)")
	return cmd
}
