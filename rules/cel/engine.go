package cel

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	celgo "github.com/google/cel-go/cel"
	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimek8s "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Options configure an Engine.
type Options struct {
	// User and Groups are request.userInfo (default kiln:offline in system:authenticated).
	User   string
	Groups []string
	// Authorizer is what the CEL authorizer answers: "allow" or "deny" (default).
	Authorizer string
	// RuleID names the rule of a policy's findings (default "policy/" + name).
	RuleID func(policyName string) string
	// DefaultActions, when set, binds every policy that no binding in the
	// set refers to, to all objects, with these validationActions (for
	// rule sets written as policies without bindings).
	DefaultActions []admissionv1.ValidationAction
	// CompileOnMatch defers compiling a policy's expressions until a
	// binding of it first matches an object, so that a run pays only for
	// the policies its kinds can match. Setup then leaves compile problems
	// out (the validator still fails at evaluation as upstream's does): for
	// policies known to compile, as kiln's built-in ones (a test compiles
	// each eagerly).
	CompileOnMatch bool
}

// Engine is a compiled set of ValidatingAdmissionPolicies and bindings
// with the offline context they need (kinds, params, namespaces, user).
// Build it with New; Evaluate is safe for concurrent use.
type Engine struct {
	opts     Options
	policies []*policyEntry
	kinds    *manifest.Kinds
	ns       *namespaces
	oi       *objectInterfaces
	matcher  generic.PolicyMatcher
	user     user.Info
	authz    authorizer.UnconditionalAuthorizer
	setup    []rules.Diagnostic
	// rules are the rules of the setup's problems; allRules adds one per
	// policy, written when first asked for (kiln lint's built-in policies
	// never ask: their rules come from their annotations).
	rules    map[string]*rules.Rule
	allRules func() []*rules.Rule
	skip     map[manifest.Key]bool
	ctxObjs  []*manifest.Object
	// admitted are the Namespaces of the context copies whose content went
	// once admitted (rules/schema), for a binding whose params are
	// Namespaces. Like ctxObjs, they are let go once the engine is loaded:
	// the map holds every such copy.
	admitted admit.Namespaces
}

type policyEntry struct {
	obj       *manifest.Object
	name      string
	ruleID    string
	spec      *admissionv1.ValidatingAdmissionPolicy
	validator validating.Validator
	// configErr mirrors PolicyHook.ConfigurationError (e.g. an unknown paramKind).
	configErr  error
	params     *paramInformer
	paramScope meta.RESTScope
	bindings   []*bindingEntry
	// fieldMessages: the policy follows the field-message convention (FieldMessagesAnnotation).
	fieldMessages bool
	// fastMatch are the matchConditions evaluated before Validate (fastmatch.go).
	fastMatch []celgo.Program
	// lazy: validator and fastMatch are compiled on first use, each under
	// its Once (Options.CompileOnMatch); at load otherwise.
	lazy                  bool
	fastOnce, compileOnce sync.Once
	// fastDone: fastMatchConditions has run its Once.
	fastDone atomic.Bool
	// matches caches DefinitionMatches by request kind and resource for a
	// policy without namespace and object selectors, whose answer depends on
	// nothing else (matching.Matcher.Matches).
	matches sync.Map // matchKey → matchResult
	// cacheMatches: the policy is selectorFree.
	cacheMatches bool
}

type matchKey struct {
	kind     schema.GroupVersionKind
	resource schema.GroupVersionResource
	sub      string
	op       admission.Operation
}

type matchResult struct {
	matches  bool
	resource schema.GroupVersionResource
	kind     schema.GroupVersionKind
	err      error
}

// selectorFree reports whether the policy's matchConstraints select every
// namespace and object and name no resources, so that whether they match
// depends only on the request's kind, resource, subresource and operation.
func selectorFree(spec *admissionv1.ValidatingAdmissionPolicy) bool {
	mc := spec.Spec.MatchConstraints
	if mc == nil || !emptySelector(mc.NamespaceSelector) || !emptySelector(mc.ObjectSelector) {
		return false
	}
	for _, rules := range [][]admissionv1.NamedRuleWithOperations{mc.ResourceRules, mc.ExcludeResourceRules} {
		for _, r := range rules {
			if len(r.ResourceNames) > 0 {
				return false
			}
		}
	}
	return true
}

func emptySelector(s *metav1.LabelSelector) bool {
	return s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0)
}

type bindingEntry struct {
	obj  *manifest.Object
	spec *admissionv1.ValidatingAdmissionPolicyBinding
}

// New loads, defaults and compiles the policies and bindings among
// policyObjs (other objects there are ignored). context holds every object
// the policies may look at: CustomResourceDefinitions (kinds), params
// (ConfigMaps, custom resources) and Namespaces. Problems in the policies
// themselves are reported by Setup.
func New(policyObjs, context []*manifest.Object, opts Options) *Engine {
	return newEngine(policyObjs, context, opts, newNamespaces(context, nil), nil)
}

// newEngine is New with the namespace index of context made already and
// the Namespaces of context copies kept typed.
func newEngine(policyObjs, context []*manifest.Object, opts Options, ns *namespaces, admitted admit.Namespaces) *Engine {
	if opts.RuleID == nil {
		opts.RuleID = func(name string) string { return "policy/" + name }
	}
	if opts.User == "" {
		opts.User = "kiln:offline"
	}
	if len(opts.Groups) == 0 {
		opts.Groups = []string{"system:authenticated"}
	}
	e := &Engine{
		opts:     opts,
		kinds:    manifest.BuiltinKinds(),
		ns:       ns,
		user:     &user.DefaultInfo{Name: opts.User, Groups: opts.Groups},
		authz:    fixedAuthorizer{allow: opts.Authorizer == "allow"},
		rules:    map[string]*rules.Rule{},
		skip:     map[manifest.Key]bool{},
		ctxObjs:  context,
		admitted: admitted,
	}
	e.kinds.AddCRDs(context)
	e.oi = &objectInterfaces{kinds: e.kinds}
	e.matcher = generic.NewPolicyMatcher(matching.NewMatcher(e.ns, nil))

	byName := map[string]*policyEntry{}
	var bindings []*manifest.Object
	for _, o := range policyObjs {
		if !IsPolicyObject(o) {
			continue
		}
		e.skip[o.Key()] = true
		if o.Kind == kindBinding {
			bindings = append(bindings, o)
			continue
		}
		p := &policyEntry{obj: o, name: o.Name, ruleID: opts.RuleID(o.Name), fieldMessages: o.Annotations[FieldMessagesAnnotation] == FieldMessagesValue}
		if prev := byName[o.Name]; prev != nil {
			e.problem(p.ruleID, o, "metadata.name", rules.Error, "ValidatingAdmissionPolicy %q is defined twice (also at %s); the later one would replace the earlier, so kiln ignores this one", o.Name, prev.obj.Pos())
			continue
		}
		byName[o.Name] = p
		e.policies = append(e.policies, p)
		e.load(p)
	}
	sort.SliceStable(bindings, func(i, j int) bool { return bindings[i].Name < bindings[j].Name })
	for _, o := range bindings {
		e.loadBinding(o, byName)
	}
	if len(opts.DefaultActions) > 0 {
		for _, p := range e.policies {
			if p.spec != nil && len(p.bindings) == 0 {
				b := &admissionv1.ValidatingAdmissionPolicyBinding{}
				b.Name = p.name
				b.Spec.PolicyName = p.name
				b.Spec.ValidationActions = opts.DefaultActions
				p.bindings = append(p.bindings, &bindingEntry{obj: p.obj, spec: b})
			}
		}
	}
	if opts.CompileOnMatch && len(e.policies) > 0 {
		// The fast conditions' compiler takes a few milliseconds to
		// build; the first object's evaluation would wait for it.
		go fastCompiler()
	}
	e.ctxObjs, e.admitted = nil, nil // the bindings' params are loaded
	sort.SliceStable(e.policies, func(i, j int) bool { return e.policies[i].name < e.policies[j].name })
	e.allRules = sync.OnceValue(e.buildRules)
	return e
}

// problem records a finding on a policy or binding object.
func (e *Engine) problem(ruleID string, o *manifest.Object, field string, sev rules.Severity, format string, args ...any) {
	if _, ok := e.rules[ruleID]; !ok {
		e.rules[ruleID] = &rules.Rule{ID: ruleID, Severity: rules.Error, Summary: "ValidatingAdmissionPolicy " + strings.TrimPrefix(ruleID, "policy/") + " (not in scope)"}
	}
	e.setup = append(e.setup, rules.Diagnostic{Rule: ruleID, Severity: sev, Object: o, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (e *Engine) load(p *policyEntry) {
	spec, err := decodePolicy(p.obj)
	if err != nil {
		se := err.(*shapeError)
		e.problem(p.ruleID, p.obj, se.Field, rules.Error, "%s; the API server would reject this policy", se.Msg)
		return
	}
	p.spec = spec
	if spec.Spec.MatchConstraints == nil {
		e.problem(p.ruleID, p.obj, "spec", rules.Error, "ValidatingAdmissionPolicy %q has no spec.matchConstraints (required); the API server would reject it", p.name)
	}
	p.lazy = e.opts.CompileOnMatch
	if !p.lazy {
		p.compileOnce.Do(func() {
			for _, cp := range p.compile(true) {
				e.problem(p.ruleID, p.obj, cp.Field, rules.Error, "ValidatingAdmissionPolicy %q: %s does not compile: %v", p.name, cp.Field, cp.Err)
			}
		})
	}
	p.cacheMatches = selectorFree(spec)
	if pk := spec.Spec.ParamKind; pk != nil {
		gv, err := schema.ParseGroupVersion(pk.APIVersion)
		if err != nil {
			// Upstream skips such a policy entirely (policySource.refreshPolicies).
			e.problem(p.ruleID, p.obj, "spec.paramKind.apiVersion", rules.Error, "failed to parse paramKind APIVersion: %v", err)
			p.spec = nil
			return
		}
		gvk := gv.WithKind(pk.Kind)
		res, ok := e.kinds.Lookup(gvk)
		if !ok {
			// Upstream: policySource.ensureParamsForPolicyLocked.
			p.configErr = fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk)
			e.problem(p.ruleID, p.obj, "spec.paramKind", rules.Error, "paramKind %s is neither built in nor defined by a CustomResourceDefinition in the input: the API server would deny every request this policy matches (failurePolicy %s) until the kind exists", gvk, *spec.Spec.FailurePolicy)
			return
		}
		p.paramScope = meta.RESTScopeRoot
		if res.Namespaced {
			p.paramScope = meta.RESTScopeNamespace
		}
		p.params = e.paramsOf(res)
	}
}

// compile compiles the policy's validator and, when every expression
// compiles, its fast match conditions; checkEach finds the expressions
// that do not compile (see compilePolicy).
func (p *policyEntry) compile(checkEach bool) []compileProblem {
	var problems []compileProblem
	p.validator, problems = compilePolicy(p.spec, checkEach)
	if len(problems) == 0 {
		p.fastMatch = fastMatchConditions(p.spec)
	}
	return problems
}

// fastMatchConditions returns the policy's fast match conditions, compiled
// on first use under Options.CompileOnMatch (the policy's expressions are
// known to compile), before and without its validator.
func (p *policyEntry) fastMatchConditions() []celgo.Program {
	p.fastOnce.Do(func() {
		if p.lazy {
			p.fastMatch = fastMatchConditions(p.spec)
		}
		p.fastDone.Store(true)
	})
	return p.fastMatch
}

// compiledValidator returns the policy's validator, compiled on first use
// under Options.CompileOnMatch.
func (p *policyEntry) compiledValidator() validating.Validator {
	p.compileOnce.Do(func() { p.validator, _ = compilePolicy(p.spec, false) })
	return p.validator
}

// paramsOf indexes the input's objects of the param kind (any version of its
// group and kind, converted to the paramKind's version; namespaced ones
// without a namespace land in "default").
func (e *Engine) paramsOf(res manifest.Resource) *paramInformer {
	return paramsAmong(res, e.contextObjects(), e.admitted)
}

// paramsAmong is paramsOf over objs, with the Namespaces of the copies
// rules/schema kept typed.
func paramsAmong(res manifest.Resource, objs []*manifest.Object, admitted admit.Namespaces) *paramInformer {
	var params []*unstructured.Unstructured
	for _, o := range objs {
		if o.Kind != res.GVK.Kind || o.Group() != res.GVK.Group {
			continue
		}
		content, err := o.Content()
		if ns := admitted[o]; err != nil && ns != nil {
			// A Namespace copy kept typed (rules/schema): its content again.
			content, err = runtimek8s.DefaultUnstructuredConverter.ToUnstructured(ns)
		}
		if err != nil {
			continue
		}
		u := &unstructured.Unstructured{Object: content}
		if o.APIVersion != res.GVK.GroupVersion().String() || (res.Namespaced && o.Namespace == "") {
			u = &unstructured.Unstructured{Object: runtimek8s.DeepCopyJSON(content)}
			u.SetAPIVersion(res.GVK.GroupVersion().String())
			if res.Namespaced && o.Namespace == "" {
				u.SetNamespace("default")
			}
		}
		params = append(params, u)
	}
	return newParamInformer(res.GVR.GroupResource(), params)
}

func (e *Engine) loadBinding(o *manifest.Object, byName map[string]*policyEntry) {
	b, err := decodeBinding(o)
	if err != nil {
		se := err.(*shapeError)
		e.problem(e.opts.RuleID(policyNameOf(o)), o, se.Field, rules.Error, "%s; the API server would reject this binding", se.Msg)
		return
	}
	ruleID := e.opts.RuleID(b.Spec.PolicyName)
	p := byName[b.Spec.PolicyName]
	if p == nil {
		e.problem(ruleID, o, "spec.policyName", rules.Warning, "ValidatingAdmissionPolicyBinding %q refers to ValidatingAdmissionPolicy %q, which is neither in the input nor under --policy; the API server ignores the binding until the policy exists", b.Name, b.Spec.PolicyName)
		return
	}
	if p.spec == nil {
		return
	}
	if len(b.Spec.ValidationActions) == 0 {
		e.problem(ruleID, o, "spec.validationActions", rules.Error, "ValidatingAdmissionPolicyBinding %q has no spec.validationActions (required: Deny, Warn and/or Audit); the API server would reject it", b.Name)
	}
	if p.spec.Spec.ParamKind != nil && b.Spec.ParamRef == nil {
		e.problem(ruleID, o, "spec", rules.Warning, "ValidatingAdmissionPolicyBinding %q has no paramRef but ValidatingAdmissionPolicy %q declares paramKind %s/%s: the API server evaluates the policy with params = null", b.Name, p.name, p.spec.Spec.ParamKind.APIVersion, p.spec.Spec.ParamKind.Kind)
	}
	if ref := b.Spec.ParamRef; ref != nil && ref.ParameterNotFoundAction == nil {
		e.problem(ruleID, o, "spec.paramRef", rules.Warning, "ValidatingAdmissionPolicyBinding %q: paramRef.parameterNotFoundAction is required by admissionregistration.k8s.io/v1 (Allow or Deny); without it a missing param allows the request", b.Name)
	}
	p.bindings = append(p.bindings, &bindingEntry{obj: o, spec: b})
}

func policyNameOf(o *manifest.Object) string {
	c, err := o.Content()
	if err == nil {
		if spec, ok := c["spec"].(map[string]any); ok {
			if n, ok := spec["policyName"].(string); ok && n != "" {
				return n
			}
		}
	}
	return o.Name
}

// contextObjects are the objects New was given as context.
func (e *Engine) contextObjects() []*manifest.Object { return e.ctxObjs }

// Setup returns the findings on the policies and bindings themselves
// (shape, compile errors, unknown paramKind, dangling bindings).
func (e *Engine) Setup() []rules.Diagnostic { return append([]rules.Diagnostic(nil), e.setup...) }

// Rules returns the rules the engine may report, sorted by ID: one per
// policy (and per policy name a binding refers to).
func (e *Engine) Rules() []*rules.Rule { return append([]*rules.Rule(nil), e.allRules()...) }

func (e *Engine) buildRules() []*rules.Rule {
	byID := maps.Clone(e.rules)
	for _, p := range e.policies {
		byID[p.ruleID] = policyRule(p)
	}
	out := make([]*rules.Rule, 0, len(byID))
	for _, r := range byID {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Bindings returns how many bindings the engine evaluates against each
// object (for benchmarks: evaluations = bindings × objects).
func (e *Engine) Bindings() int {
	n := 0
	for _, p := range e.policies {
		n += len(p.bindings)
	}
	return n
}

// EvaluateObject runs every binding against one object (nothing for the
// policies and bindings themselves), as a CREATE request. It is safe for
// concurrent use.
func (e *Engine) EvaluateObject(o *manifest.Object) []rules.Diagnostic {
	if len(e.policies) == 0 || e.skip[o.Key()] {
		return nil
	}
	return e.evalObject(o)
}

// Evaluate runs every binding against every object except the policies and
// bindings themselves, as CREATE requests, in parallel over GOMAXPROCS
// workers. The diagnostics come back in object order.
func (e *Engine) Evaluate(objs []*manifest.Object) []rules.Diagnostic {
	if len(e.policies) == 0 {
		return nil
	}
	per := make([][]rules.Diagnostic, len(objs))
	parallel.EachChunk(len(objs), 64, func(i int) { per[i] = e.EvaluateObject(objs[i]) })
	var out []rules.Diagnostic
	for _, ds := range per {
		out = append(out, ds...)
	}
	return out
}
