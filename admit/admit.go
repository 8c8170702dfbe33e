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
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
}

// Admitter admits the objects of one run. Make it with New; Admit is safe
// for concurrent use.
type Admitter struct {
	opts         Options
	kinds        *manifest.Kinds
	crds         *crdSet
	vapStrategy  rest.RESTCreateStrategy
	vapbStrategy rest.RESTCreateStrategy
	strict       *kjson.Serializer
	// seen holds the answer for each distinct manifest (by its JSON), so
	// that copies (the same CRD in several kustomizations or bundles) are
	// judged once: keys are [sha256.Size]byte, values *onceResult.
	seen sync.Map
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
	res := resolver(func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
		r, ok := a.kinds.Lookup(gvk)
		if !ok {
			return schema.GroupVersionResource{}, fmt.Errorf("no resource serves %s", gvk)
		}
		return r.GVR, nil
	})
	a.vapStrategy = validatingadmissionpolicy.NewStrategy(allowAll{}, res)
	policies := policyGetter{}
	for _, o := range objs {
		if o.Group() == admreg.GroupName && o.Kind == "ValidatingAdmissionPolicy" {
			if p, ok := a.internalPolicy(o); ok {
				policies[p.Name] = p
			}
		}
	}
	a.vapbStrategy = validatingadmissionpolicybinding.NewStrategy(allowAll{}, policies, res)
	a.crds = newCRDSet(a, objs)
	return a
}

// internalPolicy decodes a policy into the internal type, leniently.
func (a *Admitter) internalPolicy(o *manifest.Object) (*admreg.ValidatingAdmissionPolicy, bool) {
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
	p, ok := internal.(*admreg.ValidatingAdmissionPolicy)
	return p, ok
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
		return a.crds.admit(o, gvk, content)
	}
	if !legacyscheme.Scheme.Recognizes(gvk) {
		return Result{}
	}
	return a.admitBuiltin(o, gvk, content)
}

func (a *Admitter) admitBuiltin(o *manifest.Object, gvk schema.GroupVersionKind, content map[string]any) Result {
	data, err := json.Marshal(content)
	if err != nil {
		return Result{Judged: true, Rejected: true, Problems: []Problem{{Rule: RuleDecode, Message: fmt.Sprintf("the object cannot be sent as JSON: %v", err)}}}
	}
	if o.Name == "" || len(data) < copiesFrom || !strings.HasPrefix(string(data), "{") {
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
	if first {
		return r.res
	}
	c := runtime.DeepCopyJSON(r.content)
	if m, ok := c["metadata"].(map[string]any); ok && m["uid"] != nil {
		m["uid"] = stableUID(o)
	}
	o.SetContent(c)
	res := r.res
	res.Problems = append([]Problem(nil), r.res.Problems...)
	return res
}

// admitJSON is admitBuiltin for one manifest and its JSON.
func (a *Admitter) admitJSON(o *manifest.Object, gvk schema.GroupVersionKind, content map[string]any, data []byte) Result {
	res := Result{Judged: true}
	obj, _, err := a.strict.Decode(data, &gvk, nil)
	if err != nil {
		if runtime.IsStrictDecodingError(err) {
			res.Problems = append(res.Problems, strictProblems(err)...)
			res.Rejected = true
		} else {
			res.Problems = append(res.Problems, decodeProblem(err, o, content))
			res.Rejected = true
			return res
		}
	}
	if obj == nil {
		res.Rejected = true
		return res
	}
	legacyscheme.Scheme.Default(obj)
	internalGV := schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal}
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, internalGV)
	if err != nil {
		res.Problems = append(res.Problems, Problem{Rule: RuleDecode, Message: fmt.Sprintf("the API server cannot convert this %s: %v", gvk.Kind, err)})
		res.Rejected = true
		return res
	}
	namespaced := a.kinds.ResourceFor(gvk).Namespaced
	if strategy := a.strategyFor(gvk.GroupKind()); strategy != nil {
		namespaced = strategy.NamespaceScoped()
		res.addCreate(a.create(o, gvk, internal, strategy))
	} else {
		a.fillMeta(o, internal, namespaced)
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

// addCreate records the validation errors (which refuse the object) and
// the warnings of a create.
func (res *Result) addCreate(errs field.ErrorList, warnings []string) {
	for _, e := range errs {
		res.Problems = append(res.Problems, fieldProblem(e))
	}
	if len(errs) > 0 {
		res.Rejected = true
	}
	for _, w := range warnings {
		res.Problems = append(res.Problems, Problem{Rule: RuleWarning, Message: w, Warning: true})
	}
}

// create runs what a create request runs on the internal object: system
// fields, the generated name, the namespace of the request, then the
// strategy's PrepareForCreate, validation (ValidateCreate: the strategy's,
// the object meta's and the declarative one) and Canonicalize.
func (a *Admitter) create(o *manifest.Object, gvk schema.GroupVersionKind, obj runtime.Object, strategy rest.RESTCreateStrategy) (field.ErrorList, []string) {
	a.fillMeta(o, obj, strategy.NamespaceScoped())
	ctx := a.context(o, gvk, strategy.NamespaceScoped())
	allocate(obj)
	strategy.PrepareForCreate(ctx, obj)
	errs := rest.ValidateCreate(ctx, obj, strategy)
	warnings := strategy.WarningsOnCreate(ctx, obj)
	if len(errs) == 0 {
		strategy.Canonicalize(obj)
	}
	return errs, warnings
}

// fillMeta sets what the server sets before PrepareForCreate: uid and
// creationTimestamp (deterministic here), a generated name, and the
// request's namespace for a namespaced object without one.
func (a *Admitter) fillMeta(o *manifest.Object, obj runtime.Object, namespaced bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	m.SetCreationTimestamp(CreationTimestamp)
	m.SetUID(types.UID(stableUID(o)))
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(m.GetGenerateName() + stableSuffix(o))
	}
	if namespaced && m.GetNamespace() == "" {
		m.SetNamespace(requestNamespace(o))
	}
	if !namespaced {
		m.SetNamespace("")
	}
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

// sortProblems orders problems by field, then message.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Field != ps[j].Field {
			return ps[i].Field < ps[j].Field
		}
		return ps[i].Message < ps[j].Message
	})
}
