package main

import (
	"fmt"

	"github.com/kilnhq/kiln/session"
	"github.com/kilnhq/kiln/session/settings"
	"github.com/spf13/cobra"
)

func newFetchCmd(e *env) *cobra.Command {
	var flags *settings.Flags
	var offlineCheck bool
	var cacheDir string
	cmd := &cobra.Command{
		Use:   "fetch [PATH...]",
		Short: "Download the Helm charts the input's HelmReleases install into kiln's chart cache (the only command that uses the network)",
		Long:  helpText("fetch"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := newSession(e, flags, args)
			if err != nil {
				return err
			}
			out, err := s.Fetch(args, session.FetchOptions{OfflineCheck: offlineCheck, CacheDir: cacheDir})
			if err != nil {
				return err
			}
			for _, n := range out.Notes {
				fmt.Fprintln(e.stderr, n)
			}
			for _, c := range out.Charts {
				fmt.Fprintf(e.stdout, "%s %s %s\n", c.Digest, c.Version, c.Source)
			}
			for _, err := range out.Errs {
				fmt.Fprintln(e.stderr, err)
			}
			if len(out.Missing) > 0 {
				for _, m := range out.Missing {
					fmt.Fprintf(e.stderr, "missing from the chart cache: %s\n", m)
				}
				if offlineCheck {
					return &session.Refused{Msg: fmt.Sprintf("kiln lint would miss %d chart(s): run `kiln fetch`", len(out.Missing))}
				}
				return session.ErrReported
			}
			fmt.Fprintf(e.stderr, "%d chart source(s), all in the chart cache\n", len(out.Sources))
			return nil
		},
	}
	flags = settings.RegisterFlags(cmd.Flags(), []string{"config", "kube-version"}, settings.Helm)
	cmd.Flags().BoolVar(&offlineCheck, "offline-check", false, "open no connection: exit 1 if kiln lint would miss a chart the cache lacks")
	cmd.Flags().StringVar(&cacheDir, "chart-cache", "", "the chart cache (default $XDG_CACHE_HOME/kiln/charts)")
	return cmd
}
