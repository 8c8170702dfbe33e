// Package mutate is mutating admission offline: the MutatingAdmissionPolicies
// and bindings of the input and of the --policy files change each object they
// match before anything judges it, as kube-apiserver's admission chain does
// between decoding (with defaulting) and validation. It runs the server's own
// code (k8s.io/apiserver's policy/mutating dispatcher and patchers:
// matchConstraints, namespace and object selectors, matchConditions,
// variables, params, ApplyConfiguration merged by server-side apply's
// structured-merge-diff, JSONPatch, reinvocationPolicy, failurePolicy, the CEL
// cost limits); only the policy compilation, which upstream leaves
// unexported, is mirrored (compile.go).
//
// The admission stage (package admit/stage) builds the run's Mutator and
// hands it to package admit, which calls it for every object it admits, so
// Pod Security, ValidatingAdmissionPolicies, the schema checks and kiln's
// own rules judge the mutated object. What it finds goes to the objects'
// manifest.Admission, which the schema checker reports. A run without a MutatingAdmissionPolicy has no Mutator
// and pays nothing. For kiln test the stage admits requests one at a time
// (stage.Requests), running the same dispatcher on each case's CREATE or
// UPDATE with ForRequests and Evaluate.
package mutate

import (
	"fmt"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/authentication/user"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
)

const (
	group       = "admissionregistration.k8s.io"
	kindPolicy  = "MutatingAdmissionPolicy"
	kindBinding = "MutatingAdmissionPolicyBinding"
)

// IsPolicyObject reports whether o is a MutatingAdmissionPolicy or its
// binding (any version).
func IsPolicyObject(o *manifest.Object) bool {
	return o.Group() == group && (o.Kind == kindPolicy || o.Kind == kindBinding)
}

// Options are the parts of the request and the cluster the policies read.
type Options struct {
	// User and Groups are request.userInfo (default kiln:offline in
	// system:authenticated, as for validating policies).
	User   string
	Groups []string
	// Authorizer is what the CEL authorizer answers: "allow" or "deny".
	Authorizer string
}

// Mutator applies the run's MutatingAdmissionPolicies (admit.Mutator). Make
// it with New for a run's objects (Mutate), with ForRequests for requests
// one at a time (Evaluate, stage.Requests); both are safe for concurrent use.
type Mutator struct {
	kinds      *manifest.Kinds
	matcher    generic.PolicyMatcher
	nsLister   corelisters.NamespaceLister
	webhooks   []webhook
	dispatcher generic.Dispatcher[mutating.PolicyHook]
	hooks      []mutating.PolicyHook
	oi         admission.ObjectInterfaces
	user       user.Info
	report     Report
	note       Note
	// matchPods: some policy's matchConstraints may match Pods, so pod
	// templates are mutated as their Pods would be.
	matchPods bool
}

// Report is told what mutating admission says of an object: an applied
// mutation or a denial of the object being admitted, or what is wrong with
// a policy or binding (while the Mutator is built).
type Report func(o *manifest.Object, p manifest.Problem)

// Note is told of what kiln cannot evaluate for the object being admitted
// (a webhook that matches it, a policy that matches a custom resource):
// said once per cause and kind (NoteFinding).
type Note func(o *manifest.Object, n manifest.KindNote)

// New loads and compiles the MutatingAdmissionPolicies and bindings among
// objs (policies and bindings the server refused at create, o.Refused, never
// exist), reading the paramKinds' objects and the Namespaces among objs, and
// the MutatingWebhookConfigurations. It returns nil when there is no policy
// with a binding and no webhook. What it finds goes to report and note.
func New(objs []*manifest.Object, kinds *manifest.Kinds, opts Options, report Report, note Note) *Mutator {
	m := build(objs, kinds, opts, report)
	if m == nil || (len(m.hooks) == 0 && len(m.webhooks) == 0) {
		return nil
	}
	m.note = note
	m.matchPods = m.anyMatchesPods()
	return m
}

// build loads and compiles the policies, bindings and webhooks among objs,
// reporting what is wrong with them; nil when there is nothing to run.
func build(objs []*manifest.Object, kinds *manifest.Kinds, opts Options, report Report) *Mutator {
	policies, bindings, refused := load(objs, report)
	for _, b := range bindings {
		name := b.spec.Spec.PolicyName
		switch _, ok := policies[name]; {
		case ok:
		case refused[name]:
			report(b.obj, manifest.Problem{Rule: RuleBinding, Field: "spec.policyName", Message: fmt.Sprintf("MutatingAdmissionPolicyBinding %q binds MutatingAdmissionPolicy %q, which the API server refuses at create (see its findings): the binding mutates nothing until the policy is fixed", b.spec.Name, name)})
		default:
			report(b.obj, manifest.Problem{Rule: RuleBinding, Field: "spec.policyName", Message: fmt.Sprintf("MutatingAdmissionPolicyBinding %q refers to MutatingAdmissionPolicy %q, which is neither in the input nor under --policy; the API server ignores the binding until the policy exists", b.spec.Name, b.spec.Spec.PolicyName)})
		}
	}
	webhooks := loadWebhooks(objs)
	if (len(policies) == 0 || len(bindings) == 0) && len(webhooks) == 0 {
		return nil
	}
	if opts.User == "" {
		opts.User = "kiln:offline"
	}
	if len(opts.Groups) == 0 {
		opts.Groups = []string{"system:authenticated"}
	}
	authz := cel.Authorizer(opts.Authorizer)
	m := &Mutator{
		webhooks: webhooks,
		nsLister: cel.NamespaceLister(objs),
		kinds:    kinds,
		oi:       objectInterfaces{ObjectInterfaces: admission.NewObjectInterfacesFromScheme(legacyscheme.Scheme), eq: cel.EquivalentResources(kinds)},
		user:     &user.DefaultInfo{Name: opts.User, Groups: opts.Groups},
		report:   report,
	}
	matcher := matching.NewMatcher(m.nsLister, nil)
	m.matcher = generic.NewPolicyMatcher(matcher)
	m.dispatcher = mutating.NewDispatcher(authz, matcher, &typeConverters{})
	// The server keeps its policies in a map and walks it in no set
	// order; kiln applies them by policy name, then binding name, so that
	// the same input gives the same objects.
	byPolicy := map[string][]*admissionv1.MutatingAdmissionPolicyBinding{}
	for _, b := range bindings {
		byPolicy[b.spec.Spec.PolicyName] = append(byPolicy[b.spec.Spec.PolicyName], b.spec)
	}
	names := make([]string, 0, len(policies))
	for name := range policies {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := policies[name]
		bs := byPolicy[name]
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
		evaluator := compilePolicy(p)
		for _, b := range bs {
			// One hook per binding, its patchers recording what they
			// change under the binding's name: the dispatcher invokes
			// the same policies, bindings and params in the same order
			// as with one hook per policy.
			hook := mutating.PolicyHook{Policy: p, Bindings: []*admissionv1.MutatingAdmissionPolicyBinding{b}, Evaluator: recording(evaluator, p.Name, b.Name)}
			m.params(&hook, objs)
			m.hooks = append(m.hooks, hook)
		}
	}
	return m
}

// params gives a hook the informer of its policy's paramKind, or the
// configuration error the server's policy source sets for a paramKind no
// resource serves.
func (m *Mutator) params(hook *mutating.PolicyHook, objs []*manifest.Object) {
	pk := hook.Policy.Spec.ParamKind
	if pk == nil {
		return
	}
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		hook.ConfigurationError = fmt.Errorf("failed to parse paramKind APIVersion: %w", err)
		return
	}
	res, ok := m.kinds.Lookup(gv.WithKind(pk.Kind))
	if !ok {
		hook.ConfigurationError = fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gv.WithKind(pk.Kind))
		return
	}
	hook.ParamScope = meta.RESTScopeRoot
	if res.Namespaced {
		hook.ParamScope = meta.RESTScopeNamespace
	}
	hook.ParamInformer = cel.ParamInformer(res, objs)
}

// Mutate runs mutating admission on one create request, as the server's
// admission chain does (admission.reinvoker: the policies once, then once
// more when a mutation asks for reinvocation), and reports each applied
// mutation and a denial on o; it notes the webhooks that match.
func (m *Mutator) Mutate(o *manifest.Object, obj runtime.Object, gvk schema.GroupVersionKind, res manifest.Resource) (runtime.Object, bool) {
	ns := requestNamespace(o, gvk, res)
	if acc, err := meta.Accessor(obj); err == nil && res.Namespaced && acc.GetNamespace() == "" {
		acc.SetNamespace(ns) // the create handler sets it from the URL
	}
	attr := admission.NewAttributesRecord(obj, nil, gvk, ns, o.Name, res.GVR, "", admission.Create, &metav1.CreateOptions{}, false, m.user)
	m.noteWebhooks(o, attr, m.nsLister)
	if len(m.hooks) == 0 {
		return obj, false
	}
	rec, err := m.dispatch(attr, gvk)
	for _, c := range rec.changes() {
		m.report(o, manifest.Problem{Rule: RuleApplied, Field: c.fields[0], Message: c.message()})
	}
	if err != nil {
		m.report(o, manifest.Problem{Rule: RuleDenied, Message: err.Error() + " (mutating admission: the server refuses the object)"})
		return attr.GetObject(), true
	}
	if m.matchPods {
		return m.templates(o, attr.GetObject(), gvk, ns), false
	}
	return attr.GetObject(), false
}

// Skip is told of an object admission judges without mutating it (a
// custom resource): it notes the policies and webhooks that match it.
func (m *Mutator) Skip(o *manifest.Object, obj runtime.Object, gvk schema.GroupVersionKind, res manifest.Resource) {
	attr := admission.NewAttributesRecord(obj, nil, gvk, requestNamespace(o, gvk, res), o.Name, res.GVR, "", admission.Create, &metav1.CreateOptions{}, false, m.user)
	m.noteWebhooks(o, attr, m.nsLister)
	m.noteUnsupported(o, attr)
}

// requestNamespace is the namespace of a create request for o: its own
// name for a Namespace, "default" for a namespaced object without one.
func requestNamespace(o *manifest.Object, gvk schema.GroupVersionKind, res manifest.Resource) string {
	switch {
	case gvk.Group == "" && gvk.Kind == "Namespace":
		return o.Name // the server's request for a Namespace names itself
	case res.Namespaced && o.Namespace == "":
		return "default"
	case res.Namespaced:
		return o.Namespace
	}
	return ""
}

// objectInterfaces are the scheme's, as the server's for built-in kinds,
// with the kind table's equivalent resources (matchPolicy Equivalent).
type objectInterfaces struct {
	admission.ObjectInterfaces
	eq runtime.EquivalentResourceMapper
}

func (o objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.eq
}

// change is what one binding of a policy changed on one object.
type change struct {
	policy, binding string
	fields          []string
}

// maxFields is how many changed fields a finding names.
const maxFields = 8

func (c change) message() string {
	fields := c.fields
	more := ""
	if len(fields) > maxFields {
		more = fmt.Sprintf(" and %d more", len(fields)-maxFields)
		fields = fields[:maxFields]
	}
	return fmt.Sprintf("MutatingAdmissionPolicy '%s' with binding '%s' changed %s%s: every other rule judges the object as changed", c.policy, c.binding, strings.Join(fields, ", "), more)
}

// anyMatchesPods reports whether some policy's matchConstraints match a
// Pod CREATE in some namespace (selectors aside).
func (m *Mutator) anyMatchesPods() bool {
	for _, h := range m.hooks {
		mc := h.Policy.Spec.MatchConstraints
		if mc == nil {
			continue
		}
		for _, r := range mc.ResourceRules {
			if matchesAny(r.APIGroups, "") && matchesAny(r.Resources, "pods") {
				return true
			}
		}
	}
	return false
}

func matchesAny(list []string, want string) bool {
	for _, s := range list {
		if s == "*" || s == want || (want == "pods" && s == "*/*") {
			return true
		}
	}
	return false
}
