package main

import (
	"fmt"
	"runtime/debug"

	"github.com/kilnhq/kiln/manifest"
	"github.com/spf13/cobra"
)

// version and commit are set at build time with -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = ""
)

func init() { commands = append(commands, newVersionCmd) }

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kiln's version, commit and supported Kubernetes range",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := commit
			if c == "" {
				c = "unknown"
				if bi, ok := debug.ReadBuildInfo(); ok {
					for _, s := range bi.Settings {
						if s.Key == "vcs.revision" {
							c = s.Value
						}
					}
				}
			}
			fmt.Fprintf(e.stdout, "kiln %s (commit %s)\nKubernetes %s to %s (default target %s)\n",
				version, c, manifest.OldestKube, manifest.LatestKube, manifest.LatestKube)
			return nil
		},
	}
}
