package main

import (
	"github.com/kilnhq/kiln/rules"
)

// failOnValues are the settings --fail-on (and its equivalents in kiln fn and
// kiln argocd generate) accept.
const failOnValues = "error, warning or never"

// parseFailOn turns a --fail-on value into the lowest severity that fails a
// run; 0 means nothing fails it. The empty string is the default, error.
func parseFailOn(s string) (rules.Severity, error) {
	switch s {
	case "", "error":
		return rules.Error, nil
	case "warning":
		return rules.Warning, nil
	case "never":
		return 0, nil
	}
	return 0, usageErrorf("--fail-on %q: use %s", s, failOnValues)
}

// failsAt reports whether res holds an unsuppressed finding at or above threshold.
func failsAt(res *rules.Result, threshold rules.Severity) bool {
	switch threshold {
	case rules.Error:
		return res.Summary.Errors > 0
	case rules.Warning:
		return res.Summary.Errors+res.Summary.Warnings > 0
	case rules.Info:
		return res.Summary.Errors+res.Summary.Warnings+res.Summary.Infos > 0
	}
	return false
}
