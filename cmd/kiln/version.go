package main

import (
	"io"
	"runtime/debug"

	"github.com/kilnhq/kiln/cmd/kiln/internal/buildinfo"
	"github.com/spf13/cobra"
)

// version and commit are set at build time by make build and make release
// (-ldflags "-X main.version=… -X main.commit=…"). Left empty, init fills
// them (buildinfo.Resolve): the module version for `go install …@vX.Y.Z`,
// else the tree's version file, and the commit Go's VCS stamp names.
var (
	version = ""
	commit  = ""
)

func init() {
	bi, _ := debug.ReadBuildInfo()
	version, commit = buildinfo.Resolve(version, commit, buildinfo.File, bi)
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
