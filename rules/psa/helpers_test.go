package psa

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// lint parses YAML and runs the PSA checker alone through the engine.
func lint(t testing.TB, src string, opts *rules.Options) *rules.Result {
	t.Helper()
	objs, errs := manifest.Parse("test.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("parse: %v\n%s", errs, src)
	}
	e := &rules.Engine{Checkers: []*rules.Checker{Checker}, Options: opts}
	res, err := e.Run(objs, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

// describeFindings renders findings one per line for comparison: "line:col
// severity rule field: message". A finding judged at an assumed level ends
// in "[assumed <namespace>]" in place of the note its message ends with
// (TestUndeclaredNamespaces checks the note's words).
func describeFindings(res *rules.Result) string {
	var b strings.Builder
	for _, f := range res.Findings {
		sup := ""
		if f.Suppressed != nil {
			sup = " (suppressed)"
		}
		msg := f.Message
		if ns := f.AssumedNamespace; ns != "" {
			i := strings.LastIndex(msg, " (assumed ")
			if i < 0 || !strings.HasSuffix(msg, ": namespace "+strconv.Quote(ns)+" is not in the input)") {
				msg += " [assumed " + ns + ", but the message does not say so]"
			} else {
				msg = msg[:i] + " [assumed " + ns + "]"
			}
		}
		fmt.Fprintf(&b, "%d:%d %s %s %s: %s%s\n", f.Pos.Line, f.Pos.Column, f.Severity, f.Rule, f.Field, msg, sup)
	}
	return b.String()
}

// ruleIDs returns the rule IDs of the active findings with at least the severity.
func ruleIDs(res *rules.Result, atLeast rules.Severity) map[string]bool {
	out := map[string]bool{}
	for _, f := range res.Active() {
		if f.Severity >= atLeast {
			out[f.Rule] = true
		}
	}
	return out
}
