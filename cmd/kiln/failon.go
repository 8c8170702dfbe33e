package main

import (
	"github.com/kilnhq/kiln/rules"
)

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
