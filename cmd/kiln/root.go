package main

import (
	"embed"
	"io"
	"strings"

	"github.com/kilnhq/kiln/cmd/kiln/internal/buildinfo"
	"github.com/kilnhq/kiln/session"
	"github.com/kilnhq/kiln/session/settings"
	"github.com/spf13/cobra"
)

// env is what commands read and write besides flags, so tests can run them in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "kiln",
		Short:         "Compile workload specs into Kubernetes manifests and lint manifests offline",
		Long:          helpText("kiln"),
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints what `kiln version` prints.
		Version: version,
	}
	root.SetVersionTemplate(strings.ReplaceAll(buildinfo.Describe(version, commit), "{{", "{{`{{`}}"))
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	for _, add := range commands {
		root.AddCommand(add(e))
	}
	return root
}

// commands are the subcommand constructors, one per command file. A new
// command adds its constructor here.
var commands = []func(*env) *cobra.Command{
	newArgoCDCmd,
	newBuildCmd,
	newCRDsCmd,
	newDiffCmd,
	newExplainCmd,
	newFetchCmd,
	newFixCmd,
	newFnCmd,
	newLintCmd,
	newPoliciesCmd,
	newPSACmd,
	newReportCmd,
	newRulesCmd,
	newTestCmd,
	newVersionCmd,
}

// group is a command that only holds subcommands (kiln psa, kiln argocd).
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	cmd.AddCommand(subs...)
	return cmd
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(e)
	root.SetArgs(args)
	// The session says what every outcome's exit code is: cobra's own
	// errors (an unknown flag or command) are usage errors.
	return session.ExitCode(root.Execute(), stderr)
}

// newSession resolves the settings of a command's flags over the config
// file nearest the paths.
func newSession(e *env, flags *settings.Flags, paths []string) (*session.Session, error) {
	given, err := flags.Settings()
	if err != nil {
		return nil, err
	}
	return session.New(given, paths, e.stdin)
}

// help holds each command's long help (help/<command>.txt): the text a
// user reads, kept apart from the flags.
//
//go:embed help/*.txt
var help embed.FS

// helpText returns a command's long help.
func helpText(name string) string {
	b, err := help.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // a command names a help file that is not embedded
	}
	return strings.TrimSuffix(string(b), "\n")
}
