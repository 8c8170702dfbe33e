package session

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// How a run ends: every command returns nil or one of these (or another
// error: a usage or input problem), and ExitCode, the one place that maps
// them, says which exit code each is (docs/design.md §4).
const (
	// ExitFindings: findings at the fail-on level, a failed test case, a
	// build refused, files not as the build would write them.
	ExitFindings = 1
	// ExitInput: input problems, a usage error, anything kiln could not do.
	ExitInput = 2
)

// ErrFindings is a run with findings at the fail-on level (exit 1), which
// its report has shown.
var ErrFindings = errors.New("findings at the fail-on level")

// ErrReported is a run stopped by input problems its report has shown
// (kiln test's broken test files) (exit 2).
var ErrReported = errors.New("input problems, reported")

// Refused is a run that refuses to deliver what it made because of its
// findings (exit 1); the message says why and what to do.
type Refused struct{ Msg string }

func (e *Refused) Error() string { return e.Msg }

// InputErrors are problems with the inputs, each with its position
// (file:line:col: what is wrong), that stop a command before it judges
// (exit 2).
type InputErrors []error

func (e InputErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// inputErrors returns errs sorted as an InputErrors error, nil for none.
func inputErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	manifest.SortErrors(errs)
	return InputErrors(errs)
}

// ExitCode is the exit code of a run that ended with err, and writes to w
// what the user has not been told: InputErrors one line each, sorted; a
// Refused's message and any other error's after "kiln: ".
func ExitCode(err error, w io.Writer) int {
	var ie InputErrors
	var refused *Refused
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrFindings):
		return ExitFindings
	case errors.Is(err, ErrReported):
		return ExitInput
	case errors.As(err, &refused):
		fmt.Fprintln(w, "kiln: "+refused.Msg)
		return ExitFindings
	case errors.As(err, &ie):
		manifest.SortErrors(ie)
		for _, e := range ie {
			fmt.Fprintln(w, e)
		}
		return ExitInput
	}
	fmt.Fprintln(w, "kiln: "+err.Error())
	return ExitInput
}
