package main

import (
	"os"

	"github.com/kilnhq/kiln/discover/argocd"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/session"
	"github.com/spf13/cobra"
)

func newArgoCDCmd(e *env) *cobra.Command {
	return group("argocd", "Argo CD config management plugin (CMP v2) commands", newArgoCDGenerateCmd(e))
}

func newArgoCDGenerateCmd(e *env) *cobra.Command {
	var noSyncWaves bool
	cmd := &cobra.Command{
		Use:   "generate [DIR]",
		Short: "CMP v2 generate: build the app in the current directory, lint it, print the YAML stream",
		Long:  helpText("argocd-generate"),
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return argoGenerate(e, dir, os.LookupEnv, os.Environ(), !noSyncWaves)
		},
	}
	cmd.Flags().BoolVar(&noSyncWaves, "no-sync-waves", false, "do not annotate compiled objects with Argo CD sync waves")
	return cmd
}

// argoGenerate is kiln argocd generate with its environment passed in.
func argoGenerate(e *env, dir string, getenv func(string) (string, bool), environ []string, syncWaves bool) error {
	s, err := session.FromArgo(getenv, environ, e.stdin, e.stderr)
	if err != nil {
		return err
	}
	app, err := argocd.PluginFromEnv(getenv, environ)
	if err != nil {
		return err
	}
	g, err := s.Generate(dir, app, syncWaves)
	if err != nil {
		return err
	}
	if len(g.Findings.Active()) > 0 {
		if err := report.Write(e.stderr, "text", g.Findings, report.Options{ToolVersion: version}); err != nil {
			return err
		}
	}
	return g.Deliver(e.stdout)
}
