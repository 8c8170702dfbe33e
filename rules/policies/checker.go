package policies

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/cel"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// Checker runs every embedded policy: kiln's single-object rules.
var Checker = NewChecker("policies", nil)

// NewChecker returns a checker named name that runs the embedded policies of
// the rules keep accepts (all when keep is nil). Findings carry the policy's
// rule ID and severity, the field of the message entry, and the entry's
// message without the API server's "ValidatingAdmissionPolicy … denied
// request: " prefix.
func NewChecker(name string, keep func(ruleID string) bool) *rules.Checker {
	byName := sync.OnceValue(func() map[string]*Policy {
		m := map[string]*Policy{}
		for _, p := range loaded() {
			if keep == nil || keep(p.Rule) {
				m[p.Name] = p
			}
		}
		return m
	})
	var rs []*rules.Rule
	for _, r := range Rules() {
		if keep == nil || keep(r.ID) {
			rs = append(rs, r)
		}
	}
	return &rules.Checker{
		Name:  name,
		Rules: rs,
		Prepare: func(pass *rules.Pass) (rules.Judge, error) {
			kept := byName()
			e, err := engineFor(pass.Options, func(p *Policy) bool { return kept[p.Name] != nil && pass.Enabled(p.Rule) })
			if err != nil {
				return nil, err
			}
			return func(o *manifest.Object) {
				for _, d := range e.EvaluateObject(o) {
					p := kept[d.Rule]
					if p == nil {
						continue
					}
					d.Rule, d.Severity = p.Rule, p.Severity
					d.Message = strings.TrimPrefix(d.Message, deniedPrefix(p.Name))
					if fixer := fixers[p.Rule]; fixer != nil {
						d.Fix = fixer(o, d.Field, pass.Options.KubeVersion)
					}
					pass.Report(d)
				}
			}, nil
		},
	}
}

// deniedPrefix is what the API server (and rules/cel) puts before a
// denial's message, with the binding named after its policy.
func deniedPrefix(policy string) string {
	return fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: ", policy, policy)
}

// engines caches one compiled engine per target version and request user:
// the engine only sees the policies, their Deny bindings and the params, so
// it does not depend on the linted objects.
var engines sync.Map // engineKey → *engineEntry

type engineKey struct {
	kube, user, groups, authorizer string
	// policies are the names of the policies compiled in.
	policies string
}

type engineEntry struct {
	once sync.Once
	e    *cel.Engine
	err  error
}

// engineFor returns the engine for the policies want accepts (those of
// enabled rules), compiled once per set.
func engineFor(opts *rules.Options, want func(*Policy) bool) (*cel.Engine, error) {
	var names []string
	for _, p := range loaded() {
		if want(p) && p.AppliesTo(opts.KubeVersion) {
			names = append(names, p.Name)
		}
	}
	key := engineKey{opts.KubeVersion.String(), opts.User, strings.Join(opts.Groups, "\x00"), opts.Authorizer, strings.Join(names, ",")}
	v, _ := engines.LoadOrStore(key, &engineEntry{})
	ent := v.(*engineEntry)
	ent.once.Do(func() { ent.e, ent.err = newEngine(opts, want) })
	return ent.e, ent.err
}

// newEngine compiles the policies want accepts that can report at
// opts.KubeVersion (see Policy.AppliesTo) with Deny bindings (rule IDs are policy names) and the
// params for that version.
func newEngine(opts *rules.Options, want func(*Policy) bool) (*cel.Engine, error) {
	objs, err := engineObjects(ExportOptions{KubeVersion: opts.KubeVersion, Actions: []admissionv1.ValidationAction{admissionv1.Deny},
		Keep: func(p *Policy) bool { return want(p) && p.AppliesTo(opts.KubeVersion) }})
	if err != nil {
		return nil, err
	}
	e := cel.New(objs, objs, cel.Options{
		User: opts.User, Groups: opts.Groups, Authorizer: opts.Authorizer,
		RuleID: func(name string) string { return name },
		// Each built-in policy compiles (TestEngineSetup): a run
		// compiles only those a kind in its input matches.
		CompileOnMatch: true,
	})
	if setup := e.Setup(); len(setup) > 0 {
		d := setup[0]
		return nil, fmt.Errorf("built-in policy %s: %s: %s", d.Rule, d.Field, d.Message)
	}
	return e, nil
}

// Objects returns Export's stream as objects (file "kiln-built-in-policies.yaml").
func Objects(opts ExportOptions) ([]*manifest.Object, error) {
	data, err := Export(opts)
	if err != nil {
		return nil, err
	}
	objs, errs := manifest.Parse("kiln-built-in-policies.yaml", data)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return objs, nil
}

// engineObjects is Objects for kiln lint's engine: the same objects in the
// same order, but each policy is the one loaded at start rather than parsed
// again from the stream (4 ms of CPU in a warm process, about twice that in
// a cold one); only the params and bindings are written and read.
// A policy's positions are those of its embedded file, which the engine
// never reports: kiln's policies compile (TestEngineSetup).
func engineObjects(opts ExportOptions) ([]*manifest.Object, error) {
	parts, err := exportParts(opts)
	if err != nil {
		return nil, err
	}
	var written [][]byte
	for _, pt := range parts {
		if pt.policy == nil {
			written = append(written, pt.doc)
		}
	}
	objs, errs := manifest.Parse("kiln-built-in-policies.yaml", bytes.Join(written, []byte("---\n")))
	if len(errs) > 0 {
		return nil, errs[0]
	}
	out := make([]*manifest.Object, 0, len(parts))
	for _, pt := range parts {
		if pt.policy != nil {
			out = append(out, pt.policy.Object)
			continue
		}
		out, objs = append(out, objs[0]), objs[1:]
	}
	return out, nil
}
