package stage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/admit/mutate"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
)

// Requests is the admission stage for requests admitted one at a time, as
// a policy test gives them (kiln test): CREATE, UPDATE with the stored
// object, DELETE, a user and groups, dry-run. It is the same stage as a
// run's (one admitter: decoding, defaulting, mutating admission, the
// registry strategies' validation), with the cluster given by the caller
// rather than read from the input. Make it with ForRequests.
type Requests struct {
	a *admit.Admitter

	mutating, context []*manifest.Object // set by SetMutating
	once              sync.Once
	m                 *mutate.Mutator
	problems          []string // what the server would not run as written
}

// ForRequests returns the stage for the requests of one suite: cluster
// holds its policies, bindings, params, Namespaces and CRDs (whose kinds it
// serves), sent the objects its requests send.
func ForRequests(cluster, sent []*manifest.Object, opts Options) *Requests {
	kinds := manifest.BuiltinKinds()
	kinds.AddCRDs(cluster)
	all := append(append([]*manifest.Object(nil), cluster...), sent...)
	a := admit.New(all, kinds, admit.Options{KubeVersion: opts.KubeVersion, User: opts.User, Groups: opts.Groups, ServiceCIDRs: opts.ServiceCIDRs})
	return &Requests{a: a}
}

// Check admits o as a create and returns the server's answer; o's content
// becomes the admitted object.
func (r *Requests) Check(o *manifest.Object) admit.Result {
	return r.a.Admit(o)
}

// SetMutating sets the MutatingAdmissionPolicies and bindings that mutate
// every request admitted after (policies, none: no mutation) and the
// cluster objects they read (context: params, Namespaces, CRDs; the
// policies and bindings among them are ignored).
func (r *Requests) SetMutating(policies, context []*manifest.Object) {
	r.mutating, r.context = policies, context
}

// Admitted is what the stage made of one request.
type Admitted struct {
	// Request is the request as validating admission sees it: the user in
	// system:authenticated, an UPDATE's object with the stored object's uid
	// and creationTimestamp, the object as mutating admission left it.
	Request cel.Request
	// Denied is mutating admission's refusal (failurePolicy Fail, a
	// patch that does not apply): its text is the server's message.
	Denied error
	// Refused is set when the server's validation refuses the object as
	// the MutatingAdmissionPolicies changed it: its answer.
	Refused *admit.Result
	// Err is set when kiln cannot admit the request as the server would
	// (a mutation of a custom resource, a policy the server would not run
	// as written): the request is not evaluated.
	Err error
}

// ErrCannotEvaluate is wrapped by Admitted.Err.
var ErrCannotEvaluate = errors.New("cannot evaluate mutations")

// Admit admits one request: the server's request fields, then mutating
// admission (CREATE and UPDATE, with the old object), then validation of
// the mutated object.
func (r *Requests) Admit(req cel.Request) Admitted {
	if req.User != "" && !slices.Contains(req.Groups, "system:authenticated") {
		// The server puts every authenticated user in this group.
		req.Groups = append(slices.Clone(req.Groups), "system:authenticated")
	}
	if req.Operation == "UPDATE" {
		req.Object = keepIdentity(req.Object, req.OldObject)
	}
	out := Admitted{Request: req}
	if len(r.mutating) == 0 || req.Object == nil {
		return out
	}
	mutated, err := r.mutate(req)
	if errors.Is(err, ErrCannotEvaluate) {
		out.Err = err
		return out
	}
	if err != nil {
		out.Denied = err
		return out
	}
	m, err := manifest.NewObject(req.Object.File, req.Object.Doc, req.Object.Item, req.Object.Node())
	if err != nil {
		out.Err = err
		return out
	}
	m.SetContent(mutated)
	out.Request.Object = m
	if check, err := manifest.NewObject(m.File, m.Doc, m.Item, m.Node()); err == nil {
		// The server validates the mutated object before the validating
		// policies see it (kiln checks it as a create).
		check.SetContent(mutated)
		if res := r.a.Admit(check); res.Rejected {
			out.Refused = &res
		}
	}
	return out
}

// mutate runs the MutatingAdmissionPolicies on req and returns the object
// after mutation. A non-nil error is a denial; one that wraps
// ErrCannotEvaluate is kiln's, not the server's.
func (r *Requests) mutate(req cel.Request) (map[string]any, error) {
	r.once.Do(r.compile)
	if len(r.problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrCannotEvaluate, strings.Join(r.problems, "; "))
	}
	if r.m == nil {
		return req.Object.Content()
	}
	out, err := r.m.Evaluate(req)
	var u *mutate.UnsupportedError
	if errors.As(err, &u) {
		return nil, fmt.Errorf("%w: %s", ErrCannotEvaluate, u.Msg)
	}
	return out, err
}

// compile loads the mutating policies with their context, once, at the
// first request. What the server would not run as written (a binding
// without its policy, a policy defined twice) makes every request
// unevaluable rather than silently different.
func (r *Requests) compile() {
	var objs []*manifest.Object
	for _, o := range r.context {
		if !mutate.IsPolicyObject(o) { // the policies come from r.mutating only
			objs = append(objs, o)
		}
	}
	objs = append(objs, r.mutating...)
	kinds := manifest.BuiltinKinds()
	kinds.AddCRDs(objs)
	r.m = mutate.ForRequests(objs, kinds, mutate.Options{}, func(o *manifest.Object, p manifest.Problem) {
		pos := ""
		if o != nil {
			pos = o.Pos().String() + ": "
		}
		r.problems = append(r.problems, pos+p.Message)
	})
}

// keepIdentity returns the new object of an update with the stored
// object's uid and creationTimestamp, which the server keeps on update.
func keepIdentity(o, old *manifest.Object) *manifest.Object {
	c, err1 := o.Content()
	oc, err2 := old.Content()
	if err1 != nil || err2 != nil {
		return o
	}
	md, _ := c["metadata"].(map[string]any)
	omd, _ := oc["metadata"].(map[string]any)
	if md == nil || omd == nil {
		return o
	}
	cp, err := manifest.NewObject(o.File, o.Doc, o.Item, o.Node())
	if err != nil {
		return o
	}
	content := make(map[string]any, len(c))
	for k, v := range c {
		content[k] = v
	}
	meta := make(map[string]any, len(md))
	for k, v := range md {
		meta[k] = v
	}
	for _, k := range []string{"uid", "creationTimestamp"} {
		if v, ok := omd[k]; ok {
			meta[k] = v
		} else {
			delete(meta, k)
		}
	}
	content["metadata"] = meta
	cp.SetContent(content)
	return cp
}
