// Package stage is admission as a stage of a run, between discovery and
// judging: one admitter per run (package admit: strict decoding,
// defaulting, the registry strategies' validation, served versions, CRD
// schemas) with the run's mutating admission (package admit/mutate) between
// defaulting and validation. It admits the context objects first, so that
// every checker prepares with what the server would hold, then every object
// to be judged, in place: the object's content becomes the object the
// server would admit, Refused says whether it would refuse it, and
// manifest.Object.Admission holds what it found, which the schema checker
// reports. Checkers see admitted objects and never change them.
package stage

import (
	"math"
	"sync"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/admit/mutate"
	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/manifest"
)

// Options are the parts of the requests and the cluster admission reads.
type Options struct {
	KubeVersion manifest.KubeVersion
	// User and Groups are request.userInfo; Authorizer is what the CEL
	// authorizer of mutating policies answers ("allow" or "deny").
	User       string
	Groups     []string
	Authorizer string
	// ServiceCIDRs is the cluster's service network (admit.Options).
	ServiceCIDRs []string
}

// Stage is the admission of one run. Make it with New; Admit is safe for
// concurrent use.
type Stage struct {
	a     *admit.Admitter
	mu    sync.Mutex
	done  map[manifest.Key]*manifest.Object // the context objects, by key, until judged
	prune sync.Once
}

// New admits the context objects of a run (ctx: the input's Namespaces,
// CRDs, policies, bindings, params and StorageClasses, as the caller read
// them before judging) and given (the objects of the --policy files, placed
// after every input object), and returns the stage that admits every other
// object. The MutatingAdmissionPolicies and bindings among them are
// admitted first: one the server refuses never applies, and every other
// object, context included, is admitted through those that exist.
func New(ctx, given []*manifest.Object, opts Options) *Stage {
	// A rendered context object's content is decoded: it lets go of the
	// parts of its tree it can read again (a large CRD's schemas) before
	// admission makes memory grow. What reads the tree reads them back;
	// they go again once every checker prepared (rules.Engine.Stream).
	for _, o := range ctx {
		o.ReleaseDetachable()
	}
	for i, o := range given {
		o.Order = math.MaxInt64/2 + int64(i) // after every linted object
	}
	all := ctx
	if len(given) > 0 {
		all = append(append([]*manifest.Object(nil), ctx...), given...)
	}
	kinds := manifest.BuiltinKinds()
	kinds.AddCRDs(all)
	a := admit.New(all, kinds, admit.Options{KubeVersion: opts.KubeVersion, User: opts.User, Groups: opts.Groups, ServiceCIDRs: opts.ServiceCIDRs})
	s := &Stage{a: a, done: make(map[manifest.Key]*manifest.Object, len(all))}
	admitted := make([]bool, len(all))
	for i, o := range all {
		if mutate.IsPolicyObject(o) {
			admitOne(a, o, true)
			admitted[i] = true
		}
	}
	if m := mutate.New(all, kinds, mutate.Options{User: opts.User, Groups: opts.Groups, Authorizer: opts.Authorizer}, report, note); m != nil {
		a.SetMutator(m)
	}
	parallel.EachChunk(len(all), 16, func(i int) {
		o := all[i]
		if !admitted[i] {
			admitOne(a, o, true)
		}
		if o.ReadAhead && admit.IsNamespace(o) {
			// What the checkers read of a Namespace copy is its labels
			// and the admitted Namespace: kept typed, without the
			// content, it costs a fraction.
			o.Admission.Kept = admit.NamespaceOf(o)
			o.DropContent()
		}
	})
	// Every copy of a context object was admitted above (a copy read again
	// from its file gets its answer from done, in Admit).
	a.ForgetCopies()
	for _, o := range all {
		s.done[o.Key()] = o
	}
	return s
}

// AdmitAll admits objects held in memory, every one of them context (kiln
// psa plan reads them as the server would admit them), with the objects of
// the --policy files (given).
func AdmitAll(objs, given []*manifest.Object, opts Options) {
	New(objs, given, opts)
}

// admitOne admits o and records what admission found on it.
func admitOne(a *admit.Admitter, o *manifest.Object, context bool) {
	adm := &manifest.Admission{Context: context}
	o.Admission = adm
	r := a.Admit(o)
	adm.Judged = r.Judged
	for _, p := range r.Problems {
		adm.Problems = append(adm.Problems, manifest.Problem{Rule: p.Rule, Field: p.Field, Message: p.Message, Warning: p.Warning})
	}
}

// report records what mutating admission says of o (called while o is
// admitted, or, for a policy or binding, while the mutator is built).
func report(o *manifest.Object, p manifest.Problem) {
	if o.Admission == nil {
		o.Admission = &manifest.Admission{}
	}
	o.Admission.Mutations = append(o.Admission.Mutations, p)
}

// note records a note of mutating admission on o, being admitted.
func note(o *manifest.Object, n manifest.KindNote) {
	if o.Admission == nil {
		o.Admission = &manifest.Admission{}
	}
	o.Admission.Notes = append(o.Admission.Notes, n)
}

// Admit admits one object to be judged, in place. A context object was
// admitted already; the same document read again (kiln lint reads the
// context ahead, then every file again) takes over its copy's admitted
// content while the copy holds it, and is admitted afresh once the copy
// let go of it.
func (s *Stage) Admit(o *manifest.Object) {
	s.prune.Do(s.pruneDropped) // judging has started: the context has served
	key := o.Key()
	s.mu.Lock()
	done, ok := s.done[key]
	delete(s.done, key)
	s.mu.Unlock()
	switch {
	case ok && done == o:
	case ok && done.HasContent() && done.Admission != nil:
		c, _ := done.Content()
		o.SetContent(c)
		o.Refused = done.Refused
		o.Admission = &manifest.Admission{Judged: done.Admission.Judged, Problems: done.Admission.Problems, Context: true}
	default:
		admitOne(s.a, o, false)
	}
}

// pruneDropped lets go of the context objects whose content is gone (a
// lint's first-pass copies, dropped once every checker prepared): the
// document read again is admitted afresh, so they would only take memory
// until it is judged.
func (s *Stage) pruneDropped() {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := map[manifest.Key]*manifest.Object{} // a map does not shrink as entries go
	for k, o := range s.done {
		if o.HasContent() {
			kept[k] = o
		}
	}
	s.done = kept
}
