package rules

import (
	"github.com/kilnhq/kiln/manifest"
)

// Finding is a diagnostic after the engine has placed and judged it.
type Finding struct {
	Rule     string
	Severity Severity
	Message  string
	Pos      manifest.Position
	Object   manifest.Ref
	Field    string
	// Suppressed is set when an annotation or the config silenced the finding.
	Suppressed *Suppression
	// Fix is the repair the checker attached to the diagnostic (nil: none).
	Fix *Fix
	// AssumedNamespace names the namespace whose Pod Security level was
	// assumed to judge this finding ("" when nothing was assumed).
	AssumedNamespace string
	// Via names what rendered the finding's object (manifest.Object.Via).
	Via string
	// Baselined is set when a baseline (kiln lint --baseline, or the tree
	// at --new-from-rev) already holds the finding: it is reported as
	// existing and never fails the run.
	Baselined bool
}

// Suppression says why a finding is not counted.
type Suppression struct {
	// Kind is "annotation" or "config".
	Kind   string
	Reason string
}

// Summary counts what a run saw and found. Suppressed findings are counted
// only in Suppressed, baselined ones only in Baselined.
type Summary struct {
	Files      int `json:"files"`
	Objects    int `json:"objects"`
	Errors     int `json:"errors"`
	Warnings   int `json:"warnings"`
	Infos      int `json:"infos"`
	Suppressed int `json:"suppressed"`
	// Assumed counts the unsuppressed findings judged at an assumed Pod
	// Security level (Finding.AssumedNamespace), among those above.
	Assumed int `json:"assumed"`
	// Baselined counts the unsuppressed findings a baseline holds.
	Baselined int `json:"baselined,omitempty"`
}

// Result is the outcome of a run.
type Result struct {
	// Findings are sorted by file, line, column, rule and message;
	// suppressed ones included. A run whose store kept them elsewhere
	// (Engine.Findings) leaves Findings nil: Each reads them all.
	Findings []Finding
	Summary  Summary
	// Rules are the rules of the checkers that ran, by ID (for reports that describe them).
	Rules []*Rule
	// Files lists every file read, in input order, with the objects it holds (for per-file reports).
	Files []FileObjects
	// Catalog names the entries of kiln's CRD catalog whose CRDs judged
	// custom resources ("cert-manager v1.21.2"), sorted.
	Catalog []string

	stream FindingStream             // the findings, if the store kept them elsewhere
	keep   func(Finding) bool        // of the spilled findings, those Keep kept
	known  func() func(Finding) bool // of the spilled findings, those a baseline holds (see Baseline)
	err    error                     // reading the spill to count failed
}

// Each calls fn for every finding in order (Findings, or the spilled ones
// read back) and stops at the first error fn or reading returns.
func (r *Result) Each(fn func(Finding) error) error {
	if r.stream == nil {
		for _, f := range r.Findings {
			if err := fn(f); err != nil {
				return err
			}
		}
		return nil
	}
	if r.err != nil {
		return r.err
	}
	var prev Finding
	first := true
	var known func(Finding) bool
	if r.known != nil {
		known = r.known()
	}
	return r.stream.Each(func(f Finding) error {
		if !first && sameFinding(prev, f) {
			return nil // a repeat, as dedup drops them
		}
		first, prev = false, f
		if r.keep != nil && !r.keep(f) {
			return nil
		}
		if known != nil && f.Suppressed == nil {
			f.Baselined = known(f)
		}
		return fn(f)
	})
}

// Close lets go of the findings a store kept outside memory (a temp
// file); Each fails after it. It does nothing for a Result in memory.
func (r *Result) Close() error {
	if r == nil || r.stream == nil {
		return nil
	}
	return r.stream.Close()
}

// FileObjects is one input file and its objects.
type FileObjects struct {
	File    string
	Objects []manifest.Ref
}

// Active returns the findings in memory (Findings) that are neither
// suppressed nor baselined.
func (r *Result) Active() []Finding {
	out := make([]Finding, 0, len(r.Findings))
	for _, f := range r.Findings {
		if f.Suppressed == nil && !f.Baselined {
			out = append(out, f)
		}
	}
	return out
}

// HasErrors reports whether an unsuppressed error-level finding exists.
func (r *Result) HasErrors() bool { return r.Summary.Errors > 0 }
