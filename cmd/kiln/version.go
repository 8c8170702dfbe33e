package main

import (
	"io"
	"runtime/debug"

	"github.com/kilnhq/kiln/internal/buildinfo"
	"github.com/spf13/cobra"
)

// version and commit are set at build time by make build and make release
// (-ldflags "-X main.version=… -X main.commit=…"). Left empty, init fills
// them from the build info the go command records: the module version for
// `go install …@vX.Y.Z`, the VCS revision for a build in a checkout.
var (
	version = ""
	commit  = ""
)

func init() {
	commands = append(commands, newVersionCmd)
	bi, _ := debug.ReadBuildInfo()
	version, commit = buildinfo.Resolve(version, commit, bi)
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kiln's version, commit and supported Kubernetes range",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(e.stdout, buildinfo.Describe(version, commit))
			return err
		},
	}
}
