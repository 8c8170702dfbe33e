package session

import (
	"io"
	"os"

	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// Merge is kiln report merge: the -f json reports of every shard of a
// kiln lint --shard I/N run (files; "-" for stdin) combined into the whole
// run's findings, with every rule for the formats that describe them.
func Merge(files []string, stdin io.Reader) (*Linted, error) {
	readers := make([]io.Reader, len(files))
	for i, f := range files {
		if f == "-" {
			readers[i] = stdin
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		readers[i] = fh
	}
	res, in, err := report.Merge(readers, func(i int) string { return files[i] })
	if err != nil {
		return nil, err
	}
	res.Rules = checkers.Rules()
	return &Linted{Result: res, Inputs: in}, nil
}

// Verdict is the outcome of the run a merge combined, at the default
// fail-on level (error): as Session.Verdict.
func (l *Linted) Verdict() error {
	if len(l.Inputs.Errors) > 0 {
		return InputErrors(l.Inputs.Errors)
	}
	if FailsAt(l.Result, rules.Error) {
		return ErrFindings
	}
	return nil
}
