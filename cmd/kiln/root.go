package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes (docs/design.md §4).
const (
	exitOK       = 0
	exitFindings = 1
	exitInput    = 2
)

// exitError carries an exit code out of a command; a nil-message one just sets the code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageErrorf is a usage or input problem: exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitInput, msg: fmt.Sprintf(format, args...)}
}

// env is what commands read and write besides flags, so tests can run them in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "kiln",
		Short: "Compile workload specs into Kubernetes manifests and lint manifests offline",
		Long: `kiln compiles small workload specs into correct Kubernetes objects and lints any
manifests offline, judging Pod Security Admission and ValidatingAdmissionPolicies
exactly as the API server does, plus kiln's own rules.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints what `kiln version` prints.
		Version: version,
	}
	var v strings.Builder
	writeVersion(&v)
	root.SetVersionTemplate(strings.ReplaceAll(v.String(), "{{", "{{`{{`}}"))
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	for _, add := range commands {
		root.AddCommand(add(e))
	}
	return root
}

// commands are the subcommand constructors; each command file adds its own in init.
var commands []func(*env) *cobra.Command

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(e)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "kiln: "+ee.msg)
		}
		return ee.code
	}
	// Cobra's own errors (unknown flag, unknown command) are usage errors.
	fmt.Fprintln(stderr, "kiln: "+err.Error())
	return exitInput
}
