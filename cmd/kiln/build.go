package main

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/compiler/outdir"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/session"
	"github.com/kilnhq/kiln/session/settings"
	"github.com/spf13/cobra"
)

func newBuildCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var outDir string
	var check, noLint, argocd, showMutated bool
	cmd := &cobra.Command{
		Use:   "build [PATH...] [-o DIR]",
		Short: "Compile App specs into Kubernetes manifests, lint them, print or write them",
		Long:  strings.ReplaceAll(helpText("build"), "$MANIFEST", outdir.Manifest),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := newSession(e, flags, args)
			if err != nil {
				return err
			}
			b, err := s.Build(args, session.BuildOptions{OutDir: outDir, NoLint: noLint, SyncWaves: argocd, ShowMutated: showMutated, Check: check})
			if b != nil {
				for _, w := range b.Warnings {
					fmt.Fprintln(e.stderr, session.WarningLine(w))
				}
			}
			if err != nil {
				return err
			}
			if own := b.Findings; own != nil && len(own.Findings) > own.Summary.Suppressed {
				if err := report.Write(e.stderr, "text", own, report.Options{ToolVersion: version}); err != nil {
					return err
				}
			}
			return b.Deliver(e.stdout, e.stderr)
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), settings.Lint, settings.FailOn)
	fl := cmd.Flags()
	fl.StringVarP(&outDir, "output", "o", "", "write one file per object under DIR instead of printing the stream")
	fl.BoolVar(&check, "check", false, "write nothing; exit 1 if the files under -o DIR are not what the build would write")
	fl.BoolVar(&noLint, "no-lint", false, "do not lint the compiled objects")
	fl.BoolVar(&showMutated, "show-mutated", false, "print the objects as the API server would admit them: after MutatingAdmissionPolicies, defaulting and the create strategy")
	fl.BoolVar(&argocd, "argocd", false, "annotate the objects with Argo CD sync waves: Namespace -2, ConfigMaps, Services and NetworkPolicies -1, PVCs, workloads, HPAs and PDBs 0, routes 1")
	fl.Lookup("fail-on").Usage = "lowest severity that stops the build (exit 1, nothing written): " + settings.FailOnValues + " (default error)"
	return cmd
}
