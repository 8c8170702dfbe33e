// Package admit is what kube-apiserver does to a create request before and
// around admission, with the server's own code: kubectl-equivalent JSON is
// decoded strictly into the server's types (unknown and duplicate fields,
// wrong types), defaulted by the scheme, converted to the internal version,
// prepared and validated by the kind's registry strategy (the functions a
// create runs), and checked against the versions served at the target
// Kubernetes version. Custom resources are judged against their CRD's
// structural schema, pruning, defaulting and CEL rules (crd.go).
//
// The object that comes out (the admitted object) is what admission plugins
// such as Pod Security and ValidatingAdmissionPolicies are handed: kiln's
// rules judge it instead of the manifest as written.
package admit

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	admreg "k8s.io/kubernetes/pkg/apis/admissionregistration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"

	"github.com/kilnhq/kiln/manifest"
)

// Problem is one reason the server would refuse (or warn about) an object.
type Problem struct {
	// Rule is the schema/… rule ID.
	Rule string
	// Field is the path of the field at fault ("" for the object).
	Field string
	// Message says what is wrong and what to do, in plain language.
	Message string
	// Warning is set for what the server accepts with a warning.
	Warning bool
	// Next is set for a problem the server reports only once the ones
	// before it are fixed (its message ends with NextSuffix): the server
	// answers a create with the first stage that fails (decoding, then
	// unknown fields, then allocation, then validation), kiln with every
	// stage, each judged on the object as it would be sent once the stages
	// before it pass.
	Next bool
}

// Result is the server's answer to a create of one object.
type Result struct {
	Problems []Problem
	// Rejected is set when the server would refuse the object: it never
	// exists, so admission never sees it and, for a policy or binding,
	// it never takes effect.
	Rejected bool
	// Judged is false when kiln could not judge the object at all (a custom
	// resource whose CRD is not known): its content is left as written.
	Judged bool
}

// Options are the parts of a request the server's checks read.
type Options struct {
	KubeVersion manifest.KubeVersion
	// User and Groups are the requesting user (request.userInfo).
	User   string
	Groups []string
	// Mutator, when set, is the mutating admission the server runs on
	// the decoded, defaulted object before the create strategy validates
	// it (nil: none, no cost).
	Mutator Mutator
	// ServiceCIDRs is the cluster's service network, as kube-apiserver's
	// --service-cluster-ip-range (one CIDR per IP family, the primary
	// first); empty for DefaultServiceCIDR. The settings check it as
	// kube-apiserver checks its flag; New falls back to the default for one
	// it cannot use.
	ServiceCIDRs []string
}

// Admitter admits the objects of one run. Make it with New; Admit is safe
// for concurrent use.
type Admitter struct {
	opts         Options
	kinds        *manifest.Kinds
	crds         *crdSet
	vapStrategy  rest.RESTCreateStrategy
	vapbStrategy rest.RESTCreateStrategy
	mapStrategy  rest.RESTCreateStrategy
	mapbStrategy rest.RESTCreateStrategy
	strict       *kjson.Serializer
	services     *serviceNetwork
	// seen holds the answer for each distinct manifest (by its JSON), so
	// that copies (the same CRD in several kustomizations or bundles) are
	// judged once: keys are [sha256.Size]byte, values *onceResult.
	seen sync.Map
	// decoded maps the address of a decoded content that copies share
	// (manifest.Object.SharesDecoded) to its answer: values *decodedAnswer.
	decoded sync.Map
}

// ForgetCopies lets go of the answers kept for copies so far. Once every
// context object (every CRD, Namespace and policy, with all their copies)
// has been admitted, those answers serve no other copy, and a large CRD's
// admitted content would otherwise stay for the whole run; answers for
// the objects admitted afterwards are kept again.
func (a *Admitter) ForgetCopies() {
	a.seen.Clear()
	a.decoded.Clear()
}

// copiesFrom is the size (of its JSON) from which a manifest's answer is
// kept for its copies: large objects (CRDs, repeated in several bundles)
// are costly to admit, and keeping every small object's answer would make
// memory grow with the repository.
const copiesFrom = 16 << 10

// onceResult is the answer for one distinct manifest, computed once.
type onceResult struct {
	once    sync.Once
	res     Result
	content map[string]any
}

// CreationTimestamp is the time every admitted object carries: fixed, so that
// the same input gives the same findings.
var CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// New prepares admission for the objects of one run: it reads the CRDs and
// the ValidatingAdmissionPolicies among them (a binding's create looks its
// policy up).
func New(objs []*manifest.Object, kinds *manifest.Kinds, opts Options) *Admitter {
	a := &Admitter{
		opts:   opts,
		kinds:  kinds,
		strict: kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme, kjson.SerializerOptions{Strict: true}),
	}
	var err error
	if a.services, err = newServiceNetwork(opts.ServiceCIDRs); err != nil {
		a.services, _ = newServiceNetwork(nil)
	}
	res := resolver(func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
		r, ok := a.kinds.Lookup(gvk)
		if !ok {
			return schema.GroupVersionResource{}, fmt.Errorf("no resource serves %s", gvk)
		}
		return r.GVR, nil
	})
	a.vapStrategy = validatingadmissionpolicy.NewStrategy(allowAll{}, res)
	a.mapStrategy = mutatingadmissionpolicy.NewStrategy(allowAll{}, res)
	policies := policyGetter{}
	for _, o := range objs {
		if o.Group() == admreg.GroupName && (o.Kind == "ValidatingAdmissionPolicy" || o.Kind == "MutatingAdmissionPolicy") {
			if p, ok := a.internalPolicy(o); ok {
				policies[o.Kind+"/"+p.GetName()] = p
			}
		}
	}
	a.vapbStrategy = validatingadmissionpolicybinding.NewStrategy(allowAll{}, policies, res)
	a.mapbStrategy = mutatingadmissionpolicybinding.NewStrategy(allowAll{}, policies, res)
	a.crds = newCRDSet(a, objs)
	return a
}

// SetMutator makes every later Admit run mutating admission (call it before
// admitting from several goroutines): the policies are admitted first, with
// the Admitter they mutate every other object through.
func (a *Admitter) SetMutator(m Mutator) { a.opts.Mutator = m }

// internalPolicy decodes a validating or mutating policy into the internal
// type, leniently.
func (a *Admitter) internalPolicy(o *manifest.Object) (metav1.Object, bool) {
	content, err := o.Content()
	if err != nil {
		return nil, false
	}
	data, err := json.Marshal(content)
	if err != nil {
		return nil, false
	}
	gvk := schema.FromAPIVersionAndKind(o.APIVersion, o.Kind)
	obj, _, err := a.strict.Decode(data, &gvk, nil)
	if obj == nil || (err != nil && !runtime.IsStrictDecodingError(err)) {
		return nil, false
	}
	legacyscheme.Scheme.Default(obj)
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, false
	}
	switch p := internal.(type) {
	case *admreg.ValidatingAdmissionPolicy:
		return p, true
	case *admreg.MutatingAdmissionPolicy:
		return p, true
	}
	return nil, false
}

// Admit runs the server's create path on one object and, when the object
// could be decoded, replaces its content with the admitted object. It never
// panics: an internal failure of the server's code is a problem on the
// object that says kiln could not judge it.
func (a *Admitter) Admit(o *manifest.Object) (res Result) {
	defer func() { o.Refused = res.Rejected }()
	defer func() {
		if r := recover(); r != nil {
			res = Result{Problems: []Problem{{
				Rule:    RuleInternal,
				Message: fmt.Sprintf("kiln could not run the API server's checks on this object (%v); the object was judged as written. Please report this with the manifest: %s", r, firstLine(string(debug.Stack()))),
				Warning: true,
			}}}
		}
	}()
	content, err := o.Content()
	if err != nil {
		return Result{}
	}
	gvk := schema.FromAPIVersionAndKind(o.APIVersion, o.Kind)
	if r, done := a.served(o, gvk); done {
		return r
	}
	if a.crds.handles(gvk) {
		if a.opts.Mutator != nil {
			a.opts.Mutator.Skip(o, &unstructured.Unstructured{Object: content}, gvk, a.kinds.ResourceFor(gvk))
		}
		return a.crds.admit(o, gvk, content)
	}
	if !legacyscheme.Scheme.Recognizes(gvk) {
		return Result{}
	}
	return a.admitBuiltin(o, gvk, content)
}

func (a *Admitter) admitBuiltin(o *manifest.Object, gvk schema.GroupVersionKind, content map[string]any) Result {
	shared := o.SharesDecoded() && o.Name != "" && a.opts.Mutator == nil
	if shared {
		// A copy holding the decoded content an answer was given for
		// is that answer's copy, told without writing it as JSON.
		if v, ok := a.decoded.Load(reflect.ValueOf(content).Pointer()); ok {
			return copyOf(o, v.(*decodedAnswer).r)
		}
	}
	data, err := json.Marshal(content)
	if err != nil {
		return Result{Judged: true, Rejected: true, Problems: []Problem{{Rule: RuleDecode, Message: fmt.Sprintf("the object cannot be sent as JSON: %v", err)}}}
	}
	if o.Name == "" || len(data) < copiesFrom || !strings.HasPrefix(string(data), "{") || a.opts.Mutator != nil {
		return a.admitJSON(o, gvk, content, data)
	}
	// A copy of a manifest already judged gets the same answer; only its
	// uid (derived from where it was read) is its own.
	v, _ := a.seen.LoadOrStore(sha256.Sum256(data), &onceResult{})
	r := v.(*onceResult)
	first := false
	r.once.Do(func() {
		first = true
		r.res = a.admitJSON(o, gvk, content, data)
		r.content, _ = o.Content()
	})
	if shared {
		a.decoded.LoadOrStore(reflect.ValueOf(content).Pointer(), &decodedAnswer{content: content, r: r})
	}
	if first {
		return r.res
	}
	return copyOf(o, r)
}

// decodedAnswer is the answer for the copies that share one decoded
// content; holding the content keeps its address from being reused.
type decodedAnswer struct {
	content map[string]any
	r       *onceResult
}

// copyOf gives o, a copy of the manifest r answers, that answer.
func copyOf(o *manifest.Object, r *onceResult) Result {
	o.SetContent(sharedCopy(r.content, o))
	res := r.res
	res.Problems = append([]Problem(nil), r.res.Problems...)
	return res
}

// sharedCopy is the admitted content of a copy of a manifest: the first
// copy's, with only its top level and metadata its own, for its uid. The
// rest is shared: admitted content is read-only (whoever changes an
// object's content sets a new one, as admission does), so the copies of one
// large manifest (a CRD every overlay renders) cost their size once.
func sharedCopy(content map[string]any, o *manifest.Object) map[string]any {
	c := maps.Clone(content)
	if m, ok := c["metadata"].(map[string]any); ok && m["uid"] != nil {
		m = maps.Clone(m)
		m["uid"] = stableUID(o)
		c["metadata"] = m
	}
	return c
}

// admitJSON is admitBuiltin for one manifest and its JSON.
func (a *Admitter) admitJSON(o *manifest.Object, gvk schema.GroupVersionKind, content map[string]any, data []byte) Result {
	res := Result{Judged: true}
	d := a.decode(o, gvk, content, data)
	res.Problems = d.problems
	res.Rejected = len(d.problems) > 0
	if d.obj == nil {
		res.Rejected = true
		return res
	}
	internal, err := toInternal(d.obj, gvk)
	if err != nil {
		res.Problems = append(res.Problems, Problem{Rule: RuleDecode, Message: fmt.Sprintf("the API server cannot convert this %s: %v", gvk.Kind, err)})
		res.Rejected = true
		return res
	}
	namespaced := a.kinds.ResourceFor(gvk).Namespaced
	if a.opts.Mutator != nil && d.typeErrors == 0 {
		// Mutating admission sees the decoded, defaulted object, before
		// the strategy prepares and validates it (the server's create
		// handler, then its registry).
		var denied bool
		internal, denied = a.opts.Mutator.Mutate(o, internal, gvk, a.kinds.ResourceFor(gvk))
		if denied {
			res.Rejected = true
		}
	}
	if strategy := a.strategyFor(gvk.GroupKind()); strategy != nil {
		namespaced = strategy.NamespaceScoped()
		c := a.create(o, gvk, internal, strategy)
		if d.typeErrors > 0 {
			c = c.confirmed(a.createZeroed(o, gvk, content, &d, strategy))
		}
		res.addStages(&d, c)
		if gvk == crdV1 {
			crdFieldsAsWritten(res.Problems)
		}
	} else {
		a.fillMeta(o, internal, namespaced)
	}
	if d.typeErrors > 0 {
		// The server cannot decode what was written: the rules after
		// admission judge the manifest as written, not kiln's guess.
		return res
	}
	admitted, err := legacyscheme.Scheme.ConvertToVersion(internal, gvk.GroupVersion())
	if err != nil {
		return res
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(admitted)
	if err != nil {
		return res
	}
	u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
	o.SetContent(u)
	return res
}

// toInternal defaults a decoded object and converts it to the internal
// version, as the server does before its strategy runs.
func toInternal(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	legacyscheme.Scheme.Default(obj)
	return legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
}

// createZeroed runs the create path on the manifest with each value the
// decoder refused replaced by the zero value of its type, rather than left
// out: what validation finds on both is what it finds whatever the value
// the user meant (a volume left out is also missing for the mounts that name
// it; a zero one is not). ok is false when that object cannot be made.
func (a *Admitter) createZeroed(o *manifest.Object, gvk schema.GroupVersionKind, content map[string]any, d *decoded, strategy rest.RESTCreateStrategy) (c created, ok bool) {
	work := runtime.DeepCopyJSON(content)
	for _, z := range d.zeroed {
		if !setAt(work, z.at, z.value) {
			return c, false
		}
	}
	data, err := json.Marshal(work)
	if err != nil {
		return c, false
	}
	obj, _, err := a.strict.Decode(data, &gvk, nil)
	if obj == nil || (err != nil && !runtime.IsStrictDecodingError(err)) {
		return c, false
	}
	internal, err := toInternal(obj, gvk)
	if err != nil {
		return c, false
	}
	return a.create(o, gvk, internal, strategy), true
}

// addStages records what the create path after decoding says: the
// allocation's errors (the server stops at them), then validation's errors
// and the warnings. A stage after one that refused the object is marked
// Next, and says nothing where the decoder left a value out or a field is
// misspelled (d.hidden), nor repeats an earlier problem.
func (res *Result) addStages(d *decoded, c created) {
	earlier := map[string]bool{}
	for _, p := range res.Problems {
		earlier[p.Field+"\x00"+strings.TrimSuffix(p.Message, NextSuffix)] = true
	}
	add := func(p Problem) {
		p.Message = scrub(p.Message, c.invented)
		if d.hidden(p.Field) || earlier[p.Field+"\x00"+p.Message] {
			return
		}
		earlier[p.Field+"\x00"+p.Message] = true
		if res.Rejected {
			p.markNext()
		}
		res.Problems = append(res.Problems, p)
	}
	for _, e := range c.allocErrs {
		add(fieldProblem(e))
	}
	if len(c.allocErrs) > 0 {
		res.Rejected = true
	}
	for _, e := range c.errs {
		p := fieldProblem(e)
		p.Message += c.notes[e]
		add(p)
	}
	if len(c.errs) > 0 {
		res.Rejected = true
	}
	for _, w := range c.warnings {
		// Judged as the object's warning (a misspelled field beside it
		// does not hide it), placed at the field it names.
		n := len(res.Problems)
		add(Problem{Rule: RuleWarning, Message: w, Warning: true})
		if len(res.Problems) > n {
			res.Problems[n].Field = warningField(w)
		}
	}
}

// warningFieldRE is the field path a server warning starts with
// ("spec.volumes[0].glusterfs: deprecated in v1.25…",
// "metadata.annotations[volume.beta.kubernetes.io/storage-class]: …").
var warningFieldRE = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9]*(?:\.[a-zA-Z][a-zA-Z0-9]*|\[[^\]\s]+\])*): `)

// warningField returns the field a server warning names at its start, so
// that the warning points at the field, not at the object's first line;
// "" when it names none.
func warningField(w string) string {
	if m := warningFieldRE.FindStringSubmatch(w); m != nil && strings.ContainsAny(m[1], ".[") {
		return m[1]
	}
	return ""
}

// confirmed keeps of c's errors and warnings those that other, found on
// the same object with different stand-ins for the values the decoder
// refused, finds too: the others come from the stand-ins, not from what the
// user wrote. Without other (ok false), it keeps none.
func (c created) confirmed(other created, ok bool) created {
	if !ok {
		return created{invented: c.invented}
	}
	keep := func(errs, in field.ErrorList) field.ErrorList {
		seen := map[string]bool{}
		for _, e := range in {
			seen[e.Error()] = true
		}
		var out field.ErrorList
		for _, e := range errs {
			if seen[e.Error()] {
				out = append(out, e)
			}
		}
		return out
	}
	c.allocErrs = keep(c.allocErrs, other.allocErrs)
	c.errs = keep(c.errs, other.errs)
	var warnings []string
	for _, w := range c.warnings {
		if slices.Contains(other.warnings, w) {
			warnings = append(warnings, w)
		}
	}
	c.warnings = warnings
	return c
}

// created is what the create path after decoding found.
type created struct {
	// allocErrs are the errors of what the server allocates before
	// validation (a Service's IP families, cluster IPs and node ports): the
	// server stops at them.
	allocErrs field.ErrorList
	// errs are validation's; warnings the strategy's WarningsOnCreate.
	errs     field.ErrorList
	warnings []string
	// invented are the values kiln filled in where the server would
	// choose its own: messages name them instead of quoting them.
	invented []invented
	// notes are appended to the messages of some errors.
	notes map[*field.Error]string
}

// create runs what a create request runs on the internal object: system
// fields, the generated name, the namespace of the request, what the
// kind's storage allocates (BeginCreate), then the strategy's
// PrepareForCreate, validation (ValidateCreate: the strategy's, the object
// meta's and the declarative one) and Canonicalize. Where allocation fails
// the server stops; kiln validates the rest all the same (addStages marks
// what it finds as next).
func (a *Admitter) create(o *manifest.Object, gvk schema.GroupVersionKind, obj runtime.Object, strategy rest.RESTCreateStrategy) created {
	var c created
	c.invented = a.fillMeta(o, obj, strategy.NamespaceScoped())
	ctx := a.context(o, gvk, strategy.NamespaceScoped())
	allocErrs, chosen := a.allocate(obj)
	c.allocErrs, c.invented = allocErrs, append(c.invented, chosen...)
	strategy.PrepareForCreate(ctx, obj)
	c.errs = generatedNameHidden(rest.ValidateCreate(ctx, obj, strategy), c.invented)
	if len(c.allocErrs) > 0 {
		c.errs = allocationHidden(c.errs)
	}
	c.warnings = strategy.WarningsOnCreate(ctx, obj)
	if len(c.allocErrs) == 0 && len(c.errs) == 0 {
		strategy.Canonicalize(obj)
	}
	return c
}

// generatedNameHidden drops validation's error on a generated name when
// generateName has one: the name is generateName and random characters, so
// the user has one thing to fix, which the generateName error names.
func generatedNameHidden(errs field.ErrorList, values []invented) field.ErrorList {
	generated, generateNameErr := false, false
	for _, v := range values {
		generated = generated || v.generatedName
	}
	for _, e := range errs {
		generateNameErr = generateNameErr || e.Field == "metadata.generateName"
	}
	if !generated || !generateNameErr {
		return errs
	}
	var out field.ErrorList
	for _, e := range errs {
		if e.Field != "metadata.name" {
			out = append(out, e)
		}
	}
	return out
}

// fillMeta sets what the server sets before PrepareForCreate (see Filled):
// uid and creationTimestamp (deterministic here), a generated name, and the
// request's namespace for a namespaced object without one. It returns the
// values it invented.
func (a *Admitter) fillMeta(o *manifest.Object, obj runtime.Object, namespaced bool) []invented {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	m.SetCreationTimestamp(CreationTimestamp)
	uid := stableUID(o)
	m.SetUID(types.UID(uid))
	out := []invented{
		{value: uid, says: "(the uid the server generates)"},
		{value: CreationTimestamp.UTC().Format(time.RFC3339), says: "(the time of the request)"},
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		name := generatedName(m.GetGenerateName(), o)
		m.SetName(name)
		out = append(out, invented{value: name, says: fmt.Sprintf("(the name the server generates from generateName %q)", m.GetGenerateName()), generatedName: true})
	}
	if namespaced && m.GetNamespace() == "" {
		m.SetNamespace(requestNamespace(o))
	}
	if !namespaced {
		m.SetNamespace("")
	}
	return out
}

// requestNamespace is the namespace kubectl sends an object to: its own, or
// the kubeconfig's default ("default").
func requestNamespace(o *manifest.Object) string {
	if o.Namespace != "" {
		return o.Namespace
	}
	return metav1.NamespaceDefault
}

func (a *Admitter) context(o *manifest.Object, gvk schema.GroupVersionKind, namespaced bool) context.Context {
	ctx := context.Background()
	if namespaced {
		ctx = genericapirequest.WithNamespace(ctx, requestNamespace(o))
	} else {
		ctx = genericapirequest.WithNamespace(ctx, "")
	}
	ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: a.opts.User, Groups: a.opts.Groups})
	r := a.kinds.ResourceFor(gvk)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIGroup: gvk.Group, APIVersion: gvk.Version,
		Resource: r.GVR.Resource, Namespace: requestNamespace(o), Name: o.Name,
	})
	return ctx
}

// stableUID derives a UUID-shaped uid from where the object was read, so
// that policies reading object.metadata.uid see the same value every run.
func stableUID(o *manifest.Object) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d\x00%s", o.File, o.Doc, o.Item, o.Ref())))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// generatedName is the server's name generator (names.SimpleNameGenerator):
// generateName cut to 58 characters and 5 characters appended (random
// there; derived from the source here).
func generatedName(base string, o *manifest.Object) string {
	const maxGeneratedNameLength = 63 - 5
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	return base + stableSuffix(o)
}

// stableSuffix is the 5-character suffix the server's name generator
// appends to generateName (random there; derived from the source here).
func stableSuffix(o *manifest.Object) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789" // the server's generator alphabet
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", o.File, o.Doc, o.Item)))
	var b strings.Builder
	for i := 0; i < 5; i++ {
		b.WriteByte(alphabet[int(h[i])%len(alphabet)])
	}
	return b.String()
}

func firstLine(s string) string {
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.Contains(l, "k8s.io/") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// Mutator is mutating admission (admit/mutate: MutatingAdmissionPolicies).
// Mutate gets the object of a create as the server's admission chain does,
// decoded, defaulted and converted to the internal version, and returns it
// as the policies leave it (obj itself when none applies); denied is set
// when a policy denies the request (the server refuses the object). It
// reports its own findings and must be safe for concurrent use.
type Mutator interface {
	Mutate(o *manifest.Object, obj runtime.Object, gvk schema.GroupVersionKind, res manifest.Resource) (mutated runtime.Object, denied bool)
	// Skip is told of an object admitted without mutation (a custom
	// resource), so that it can say which policies it leaves unapplied.
	Skip(o *manifest.Object, obj runtime.Object, gvk schema.GroupVersionKind, res manifest.Resource)
}
