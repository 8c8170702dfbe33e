// Package rules holds kiln's rule model and the engine that runs rules over a
// set of objects. In the spirit of golang.org/x/tools/go/analysis, a rule is a
// value with an ID and docs, a Checker runs and reports through a Pass, and
// the engine (not the rule) owns ordering, severity overrides and suppression.
package rules

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// Severity of a finding.
type Severity int

// Severities, lowest first.
const (
	Info Severity = iota + 1
	Warning
	Error
)

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "unknown"
}

// ParseSeverity accepts "error", "warning" (or "warn") and "info".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "error":
		return Error, nil
	case "warning", "warn":
		return Warning, nil
	case "info":
		return Info, nil
	}
	return 0, fmt.Errorf("unknown severity %q: use error, warning or info", s)
}

// Rule describes one kind of finding.
type Rule struct {
	// ID is the stable identifier, "<family>/<name>", e.g. "psa/runAsNonRoot".
	ID       string
	Severity Severity
	// Summary is one line, shown by `kiln rules` and in SARIF shortDescription.
	Summary string
	// Doc explains why the rule exists and what to do (shown by `kiln explain`).
	Doc string
	// Fail and Pass are YAML snippets: one that triggers the rule, one that does not.
	Fail, Pass string
}

// Checker reports findings for its rules. One checker may report several
// rules (the PSA checker reports one rule per upstream check) so that shared
// work is done once.
//
// A checker that relates objects to each other sets Run, which judges the
// whole object set. A checker that judges each object on its own sets
// Prepare instead: it may read every object (context such as Namespaces or
// policies) and returns the Judge of one object, which the engine calls for
// every object together with the other checkers' judges. That lets the
// engine judge in one parallel pass over the objects and drop each object's
// decoded content once it is judged (Engine.DropContent).
//
// Rules whose IDs are only known from the input (a user's policies) are
// declared with Pass.Declare, from Run or Prepare.
type Checker struct {
	Name    string
	Rules   []*Rule
	Run     func(*Pass) error
	Prepare func(*Pass) (Judge, error)
	// Before runs ahead of every checker's Run and Prepare, one checker at a
	// time, and may change the objects: admission replaces each object's
	// content with the object the API server would admit, which every other
	// rule then judges.
	Before func(*Pass) error
}

// Judge judges one object and reports through the Pass given to Prepare. The
// engine calls it from several goroutines at once, once per object; a nil
// Judge judges nothing.
type Judge func(*manifest.Object)

// Pass is what a checker sees: every object, the run's options, and a way to report.
type Pass struct {
	Objects  []*manifest.Object
	Options  *Options
	checker  *Checker
	report   func(Diagnostic)
	declared []*Rule
	known    map[string]bool
	enabled  func(id string) bool
}

// Enabled reports whether the run's configuration leaves a rule on, so that a
// checker can skip the work of rules that are off (the engine drops their
// findings either way).
func (p *Pass) Enabled(id string) bool {
	return p.enabled == nil || p.enabled(id)
}

// Declare adds a rule found during the run (e.g. a policy in the input) so
// that the checker may report it and reports can describe it.
// Call it before reporting the rule, from the checker's own goroutine.
func (p *Pass) Declare(r *Rule) {
	if p.known[r.ID] {
		return
	}
	p.known[r.ID] = true
	p.declared = append(p.declared, r)
}

// Diagnostic is a finding as a checker reports it; the engine resolves its
// position and applies configuration and suppression.
type Diagnostic struct {
	Rule string
	// Severity overrides the rule's default when non-zero (e.g. PSA warn mode).
	Severity Severity
	Message  string
	Object   *manifest.Object
	// Field is the path of the field at fault ("" for the whole object).
	Field string
	// Pos overrides the position found from Field, when set.
	Pos *manifest.Position
	// Fix, when set, is the repair kiln fix makes for this diagnostic.
	Fix *Fix
}

// Report records a diagnostic. It is safe for concurrent use.
func (p *Pass) Report(d Diagnostic) { p.report(d) }

// Reportf records a diagnostic for rule on obj at field with a formatted message.
func (p *Pass) Reportf(rule string, obj *manifest.Object, field, format string, args ...any) {
	p.report(Diagnostic{Rule: rule, Object: obj, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Options are the run-wide settings every checker may read.
type Options struct {
	// KubeVersion is the target Kubernetes version.
	KubeVersion manifest.KubeVersion
	// PSALevel and PSAVersion judge workloads whose Namespace is not in the input.
	PSALevel   string
	PSAVersion string
	// Policies are extra files or directories of ValidatingAdmissionPolicies and bindings.
	Policies []string
	// User and Groups are request.userInfo for CEL policies; Authorizer is "allow" or "deny".
	User       string
	Groups     []string
	Authorizer string
	// StorageClasses is a file of StorageClass objects describing the target cluster.
	StorageClasses string
}

// DefaultOptions returns the options kiln uses when no flag or config says otherwise.
func DefaultOptions() *Options {
	return &Options{
		KubeVersion: manifest.LatestKube,
		PSALevel:    "restricted",
		PSAVersion:  "latest",
		User:        "kiln:offline",
		Groups:      []string{"system:authenticated"},
		Authorizer:  "deny",
	}
}
