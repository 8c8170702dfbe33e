// Package cel evaluates ValidatingAdmissionPolicies and their bindings
// offline, with the API server's own code (k8s.io/apiserver): the Kubernetes
// CEL environment and libraries, the composited compiler, match conditions,
// the validator, and the policy and binding matchers. Only what upstream
// leaves unexported is mirrored here (policy compilation, the per-binding
// dispatch loop), each with a comment naming the upstream function.
//
// Every binding is evaluated against every other object as a CREATE
// request. Findings carry the rule ID policy/<policy name>: Deny → error,
// Warn → warning, Audit → info, with the server's own message text.
//
// The "cel" checker applies the policies found among the linted objects and
// in the --policy files; the "unknown-kind" checker notes the objects those
// policies match only by a guessed resource. NewChecker builds a checker for a fixed set of policies
// (kiln's built-in rules written as policies).
package cel

import (
	"fmt"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// requires are the contexts a policy engine is built from: the policies,
// bindings and params, the CRDs that define the kinds they match and the
// Namespaces that namespaceObject and namespace selectors read.
var requires = []rules.Context{rules.Namespaces, rules.CRDs, rules.Policies}

// Checker evaluates the ValidatingAdmissionPolicies of the input and of
// --policy against every object.
var Checker = &rules.Checker{Name: "cel", Prepare: prepare, Requires: requires}

// prepare is the "cel" checker: it loads the policies and bindings among the
// objects and of the --policy files, and returns the judge that evaluates
// them against one object.
func prepare(pass *rules.Pass) (rules.Judge, error) {
	run := runEngine(pass)
	if run.err != nil {
		return nil, run.err
	}
	if run.e == nil {
		return nil, nil
	}
	return judge(pass, run.e), nil
}

// engineRun is the policy engine of a run, shared by the "cel" and
// "unknown-kind" checkers: nil without policies; err when --policy files
// cannot be read.
type engineRun struct {
	e   *Engine
	err error
}

// sharedEngine is the Pass.Shared key of a run's engineRun.
type sharedEngine struct{}

// runEngine returns the run's policy engine, built once.
func runEngine(pass *rules.Pass) *engineRun {
	return pass.Shared(sharedEngine{}, func() any { return newRunEngine(pass) }).(*engineRun)
}

// newRunEngine builds the engine of the policies and bindings among the
// context objects and of the --policy files.
func newRunEngine(pass *rules.Pass) *engineRun {
	objs := pass.Objects
	ctxObjs := objs
	if len(pass.Options.Policies) > 0 {
		extra, errs := pass.Given(rules.Policies)
		if len(errs) > 0 {
			return &engineRun{err: fmt.Errorf("--policy: %w", joinErrors(errs))}
		}
		ctxObjs = append(append([]*manifest.Object(nil), objs...), extra...)
	}
	var policyObjs []*manifest.Object
	for _, o := range ctxObjs {
		// A policy or binding the server refuses at create never exists.
		if IsPolicyObject(o) && !o.Refused {
			policyObjs = append(policyObjs, o)
		}
	}
	if len(policyObjs) == 0 {
		return &engineRun{}
	}
	e := newEngine(policyObjs, ctxObjs, Options{
		User:       pass.Options.User,
		Groups:     pass.Options.Groups,
		Authorizer: pass.Options.Authorizer,
	}, namespacesOf(pass, ctxObjs[len(objs):]), admittedOf(pass))
	return &engineRun{e: e}
}

// judge declares the engine's rules, reports its setup problems and returns
// the judge of one object.
func judge(pass *rules.Pass, e *Engine) rules.Judge {
	for _, r := range e.Rules() {
		pass.Declare(r)
	}
	for _, d := range e.Setup() {
		pass.Report(d)
	}
	if len(e.policies) == 0 {
		return nil
	}
	return func(o *manifest.Object) {
		for _, d := range e.EvaluateObject(o) {
			pass.Report(d)
		}
	}
}

// NewChecker returns a checker named name that applies a fixed set of
// policies and bindings (e.g. kiln's built-in rules written as
// ValidatingAdmissionPolicies, embedded YAML read with manifest.Parse) to
// the linted objects. Its rules are known up front (one per policy, IDs from
// opts.RuleID, default "policy/<name>"); set opts.DefaultActions to bind the
// policies that have no binding to every object. Params, CRDs and
// Namespaces are looked up among the linted objects and the given ones;
// user, groups and authorizer default to the run's options when opts leaves
// them empty.
func NewChecker(name string, policies []*manifest.Object, opts Options) *rules.Checker {
	static := New(policies, policies, opts).Rules()
	return &rules.Checker{
		Name:     name,
		Rules:    static,
		Requires: requires,
		Prepare: func(pass *rules.Pass) (rules.Judge, error) {
			o := opts
			if o.User == "" {
				o.User = pass.Options.User
			}
			if len(o.Groups) == 0 {
				o.Groups = pass.Options.Groups
			}
			if o.Authorizer == "" {
				o.Authorizer = pass.Options.Authorizer
			}
			ctxObjs := append(append([]*manifest.Object(nil), pass.Objects...), policies...)
			return judge(pass, newEngine(policies, ctxObjs, o, namespacesOf(pass, policies), admittedOf(pass))), nil
		},
	}
}

// sharedNamespaces is the Pass.Shared key of the index of the context's
// Namespaces, which every policy engine of a run reads.
type sharedNamespaces struct{}

// namespacesOf returns the namespace index of the pass's context objects
// followed by extra: the run's shared one when extra holds no Namespace.
func namespacesOf(pass *rules.Pass, extra []*manifest.Object) *namespaces {
	admitted := admittedOf(pass)
	for _, o := range extra {
		if admit.IsNamespace(o) {
			return newNamespaces(append(append([]*manifest.Object(nil), pass.Objects...), extra...), admitted)
		}
	}
	return pass.Shared(sharedNamespaces{}, func() any { return newNamespaces(pass.Objects, admitted) }).(*namespaces)
}

// admittedOf returns the Namespaces that admission kept typed for the
// context copies whose content it let go.
func admittedOf(pass *rules.Pass) admit.Namespaces {
	return pass.Shared(sharedAdmitted{}, func() any { return admit.KeptNamespaces(pass.Objects) }).(admit.Namespaces)
}

// sharedAdmitted is the Pass.Shared key of admittedOf's Namespaces.
type sharedAdmitted struct{}
