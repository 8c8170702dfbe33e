// Package rules holds kiln's rule model and the engine that runs rules over a
// set of objects. In the spirit of golang.org/x/tools/go/analysis, a rule is a
// value with an ID and docs, a Checker runs and reports through a Pass, and
// the engine (not the rule) owns ordering, severity overrides and suppression.
package rules

import (
	"fmt"
	"strings"
	"sync"

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
	// Off is set for a rule that reports nothing unless the config turns
	// it on (rules: {<id>: on}, or a severity).
	Off bool
}

// Checker reports findings for its rules. One checker may report several
// rules (the PSA checker reports one rule per upstream check) so that shared
// work is done once.
//
// The engine judges in two passes. First every checker's Prepare sees the
// context objects it Requires (Pass.Objects: of a Stream, what the caller
// read in its first pass; of a Run over a slice, every object of those
// kinds) and returns the Judge of one object. Then the engine calls the
// judges of every object, one object at a time on every core, and lets go
// of the object once it is judged. The objects are the admitted ones (the
// admission stage, Engine.Admit, ran on them first): a checker reads them
// and never changes them. A checker
// that relates objects to each other keeps small summaries in its judge
// (with Pass.Mark for where to report) and reports from a function it
// registers with Pass.Finish, which runs after every object was judged.
//
// Rules whose IDs are only known from the input (a user's policies) are
// declared with Pass.Declare, from Prepare.
type Checker struct {
	Name  string
	Rules []*Rule
	// Declares are rules known up front that the checker declares
	// (Pass.Declare) only when the input calls for them, e.g. a note about
	// policies when there are policies: kiln rules and kiln explain list
	// them, reports only when declared.
	Declares []*Rule
	// Requires are the contexts the checker prepares with: the engine
	// hands it those objects and no others.
	Requires []Context
	Prepare  func(*Pass) (Judge, error)
	// Relates is set for a checker that relates objects of the whole input
	// (the copies of an object, the pods that share a claim): when a run
	// judges only some objects (kiln lint --shard), its judge still sees
	// every other one, raw, so that what it relates is the whole run's
	// (the engine keeps only its findings on the judged objects). Such a
	// judge must be cheap: it keeps small summaries.
	Relates bool
}

// Judge judges one object and reports through the Pass given to Prepare. The
// engine calls it from several goroutines at once, once per object; a nil
// Judge judges nothing.
type Judge func(*manifest.Object)

// Pass is what a checker sees: the context objects, the run's options, and a way to report.
type Pass struct {
	// Objects are the context objects of the contexts the checker
	// Requires, for Prepare: the engine lets go of them once
	// judging starts, so a judge keeps what it needs of them, not the
	// objects.
	Objects []*manifest.Object
	Options *Options
	shared  *shared
	checker *Checker
	report  func(Diagnostic)
	// deliver turns a diagnostic into a finding (report records it first
	// when the run remembers judged objects).
	deliver  func(Diagnostic)
	memo     Memo
	index    int // the checker's place in the engine's
	kinds    map[string]*FirstOfKind
	declared []*Rule
	known    map[string]bool
	enabled  func(id string) bool
	finish   []func()
	find     func([]int64) map[int64]*manifest.Object
	given    func(Context) ([]*manifest.Object, []error)
}

// Find returns the judged objects with the given Orders, read again (raw,
// not admitted; missing where one cannot be found), for a function
// registered with Finish that reports on an object it kept no Mark of.
func (p *Pass) Find(orders []int64) map[int64]*manifest.Object {
	if p.find == nil || len(orders) == 0 {
		return map[int64]*manifest.Object{}
	}
	return p.find(orders)
}

// Finish registers fn to run once every object was judged, in the order
// registered, for rules that relate objects: fn reports at the Marks the
// judges took. Call it from Prepare.
func (p *Pass) Finish(fn func()) { p.finish = append(p.finish, fn) }

// Shared returns what build makes from the context objects, built once per
// run for every checker that asks with the same key (a comparable value of
// the asking package's own type), so that checkers which index the same
// context (the Namespaces, say) share one index. It is for Prepare
// (later, and outside a run, build runs at every call). build runs
// once, from the first caller's goroutine; what it returns must be safe for
// concurrent reads.
func (p *Pass) Shared(key any, build func() any) any {
	if p.shared == nil {
		return build()
	}
	p.shared.mu.Lock()
	e := p.shared.m[key]
	if e == nil {
		e = &sharedEntry{}
		p.shared.m[key] = e
	}
	p.shared.mu.Unlock()
	e.once.Do(func() { e.v = build() })
	return e.v
}

// shared is a run's Pass.Shared values.
type shared struct {
	mu sync.Mutex
	m  map[any]*sharedEntry
}

type sharedEntry struct {
	once sync.Once
	v    any
}

// Mark is where a finding on an object goes, taken while the object is
// being judged, so that Finish can report on an object that is gone.
type Mark struct {
	Ref   manifest.Ref
	Pos   manifest.Position
	Field string
	// Order is the object's place in input order (manifest.Object.Order).
	Order int64
	// Via is the object's manifest.Object.Via.
	Via       string
	viaIgnore string
	key       manifest.Key
	// ignore is the object's kiln.dev/ignore annotation.
	ignore  string
	ignored bool
	// tmplIgnore is that of the pod template at path tmpl holding Field.
	tmpl        string
	tmplIgnore  string
	tmplIgnored bool
}

// Mark returns where a finding at field of o goes.
func (p *Pass) Mark(o *manifest.Object, field string) *Mark {
	v, has := o.Annotations[IgnoreAnnotation]
	m := &Mark{Ref: o.Ref(), Pos: o.Locate(field), Field: field, Order: o.Order, Via: o.Via, viaIgnore: o.ViaIgnore, key: o.Key(), ignore: v, ignored: has}
	m.tmpl, m.tmplIgnore, m.tmplIgnored = templateIgnore(o, field)
	return m
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
	// At places a diagnostic reported after its object was judged (from
	// Finish), instead of Object, Field and Pos.
	At *Mark
	// Fix, when set, is the repair kiln fix makes for this diagnostic.
	Fix *Fix
	// AssumedNamespace names the namespace whose Pod Security level the
	// checker assumed, the input and the configuration not saying it ("":
	// nothing assumed); reports count such findings.
	AssumedNamespace string
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
	// PSALevel and PSAVersion judge workloads whose Namespace is not in the
	// input (nor in PSANamespaces, nor a system namespace).
	PSALevel   string
	PSAVersion string
	// PSANamespaces are the pod-security.kubernetes.io labels of namespaces
	// the input does not declare, by namespace name, as the configuration
	// gives them (psa.namespaces): each is judged as a Namespace with those
	// labels would be.
	PSANamespaces map[string]map[string]string
	// Policies are extra files or directories of ValidatingAdmissionPolicies and bindings.
	Policies []string
	// User and Groups are request.userInfo for CEL policies; Authorizer is "allow" or "deny".
	User       string
	Groups     []string
	Authorizer string
	// StorageClasses is a file of StorageClass objects describing the target cluster.
	StorageClasses string
	// ServiceCIDRs is the target cluster's service network (kube-apiserver's
	// --service-cluster-ip-range); empty for single-stack IPv4.
	ServiceCIDRs []string
	// CRDs are files and directories of CustomResourceDefinitions the user
	// names (crds:): they define the input's custom resources that the
	// input has no CRD for, before the catalog does.
	CRDs []string
	// CatalogOff turns kiln's built-in CRD catalog off; CatalogVersions
	// pins a catalog project's version (project: version).
	CatalogOff      bool
	CatalogVersions map[string]string
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
