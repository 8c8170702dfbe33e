// Package schema is the "schema" checker: before any other rule runs, it
// sends every object through the API server's create path (package admit:
// strict decoding, defaulting, validation, served versions, CRD schemas and
// CEL rules), reports what the server would refuse or warn about at the
// field's line, and leaves each object holding the object the server would
// admit, which Pod Security, the policies and kiln's own rules then judge.
// It also reports how kubectl reads the YAML (yaml/…).
package schema

import (
	"fmt"
	"math"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/apiversions"
	"github.com/kilnhq/kiln/rules/mutate"
)

// Checker admits every object and reports the schema/… and yaml/… rules.
// It admits every context object before the other checkers prepare, so it
// requires them all.
var Checker = &rules.Checker{Name: "schema", Rules: append(append([]*rules.Rule(nil), Rules...), mutate.Rules...), Before: before,
	Requires: []rules.Context{rules.Namespaces, rules.CRDs, rules.Policies, rules.StorageClasses}}

func init() { rules.Register(Checker) }

// before admits the context objects and returns the judge that admits
// every other object.
func before(p *rules.Pass) (_ rules.Judge, err error) {
	var s *state
	ctx := p.Objects
	// The policies of --policy files are judged too: one the server
	// refuses is reported here and never applied (rules/cel). Files that
	// cannot be read stop the run there.
	if extra, _ := p.Given(rules.Policies); len(extra) > 0 {
		for i, o := range extra {
			o.Order = math.MaxInt64/2 + int64(i) // after every linted object
		}
		ctx = append(append([]*manifest.Object(nil), ctx...), extra...)
		defer func() {
			for _, o := range extra {
				judge(p, s, o)
			}
		}()
	}
	kinds := manifest.BuiltinKinds()
	kinds.AddCRDs(ctx)
	a := admit.New(ctx, kinds, admit.Options{KubeVersion: p.Options.KubeVersion, User: p.Options.User, Groups: p.Options.Groups, ServiceCIDRs: p.Options.ServiceCIDRs})
	// The context objects are admitted first, so that the other checkers
	// prepare with what the server would hold (defaulted Namespaces,
	// params, policies the server refuses); their problems are reported
	// when they are judged.
	results := make([]admit.Result, len(ctx))
	typed := make([]*corev1.Namespace, len(ctx))
	// Mutating policies first: one the server refuses never applies,
	// and every other object (context objects too) is admitted through
	// those that exist.
	admitted := make([]bool, len(ctx))
	for i, o := range ctx {
		if mutate.IsPolicyObject(o) {
			results[i], admitted[i] = a.Admit(o), true
		}
	}
	if m := mutate.New(p, ctx, kinds, mutate.Options{User: p.Options.User, Groups: p.Options.Groups, Authorizer: p.Options.Authorizer}); m != nil {
		a.SetMutator(m)
	}
	parallel.EachChunk(len(ctx), 16, func(i int) {
		o := ctx[i]
		if !admitted[i] {
			results[i] = a.Admit(o)
		}
		if o.ReadAhead && admit.IsNamespace(o) {
			// What the other checkers read of a Namespace copy is its
			// labels and the admitted Namespace: kept typed, without
			// the content, it costs a fraction.
			typed[i] = admit.NamespaceOf(o)
			o.DropContent()
		}
	})
	// Every copy of a context object was admitted above (a copy read again
	// from its file gets its answer from done, below).
	a.ForgetCopies()
	nss := admit.Namespaces{}
	for i, ns := range typed {
		if ns != nil {
			nss[ctx[i]] = ns
		}
	}
	p.Shared(admit.NamespacesKey{}, func() any { return nss })
	s = &state{a: a, done: make(map[manifest.Key]answer, len(ctx)), noCRD: p.FirstOfKind("no-crd")}
	for i, o := range ctx {
		s.done[o.Key()] = answer{o, results[i]}
	}
	p.Finish(func() { s.reportNoCRD(p) })
	return func(o *manifest.Object) {
		s.prune.Do(s.pruneDropped) // judging has started: the context has served
		judge(p, s, o)
	}, nil
}

// state is what the checker keeps between objects: the admitter, the
// answers for the context objects not judged yet (mu guards them), and the
// first custom resource of each kind whose CRD is missing.
type state struct {
	a     *admit.Admitter
	mu    sync.Mutex
	done  map[manifest.Key]answer // by the context object's key, until it is judged
	prune sync.Once
	noCRD *rules.FirstOfKind
}

// pruneDropped lets go of the answers whose object's content is gone (a
// lint's first pass copies, dropped once every checker prepared): the
// document read again is admitted afresh, so they would only take memory
// until it is judged.
func (s *state) pruneDropped() {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := map[manifest.Key]answer{} // a map does not shrink as entries go
	for k, a := range s.done {
		if a.obj.HasContent() {
			kept[k] = a
		}
	}
	s.done = kept
}

// answer is a context object's admission, handed to the object judged in
// its place (the same object, or the same document read again).
type answer struct {
	obj *manifest.Object
	res admit.Result
}

// judge admits one object (unless it was admitted as context) and reports
// what the server says of it.
func judge(p *rules.Pass, s *state, o *manifest.Object) {
	reportNotes(p, o)
	s.mu.Lock()
	done, ok := s.done[o.Key()]
	delete(s.done, o.Key())
	s.mu.Unlock()
	var r admit.Result
	switch {
	case ok && done.obj == o:
		r = done.res
	case ok && done.obj.HasContent():
		// The document read again: it gets what the context copy was
		// admitted as, and the copy is let go.
		c, _ := done.obj.Content()
		o.SetContent(c)
		o.Refused = done.obj.Refused
		r = done.res
	default:
		r = s.a.Admit(o)
	}
	if !r.Judged {
		if o.Group() != "" && !builtinLike(o) {
			s.noCRD.Note(p, o, "apiVersion", "")
		}
		return
	}
	for _, pr := range r.Problems {
		if (pr.Rule == admit.RuleUnservedKind || pr.Rule == admit.RuleUnknownKind) && apiversions.RemovedAt(o.APIVersion, o.Kind, p.Options.KubeVersion) {
			continue // api/removed says it, with the migration
		}
		d := rules.Diagnostic{Rule: pr.Rule, Object: o, Field: pr.Field, Message: pr.Message}
		if pr.Warning {
			d.Severity = rules.Warning
		}
		p.Report(d)
	}
}

// reportNoCRD reports each custom resource kind without a CRD once.
func (s *state) reportNoCRD(p *rules.Pass) {
	s.noCRD.Each(func(m *rules.Mark, _ string, _ int) {
		p.Report(rules.Diagnostic{Rule: admit.RuleNoCRD, At: m, Message: fmt.Sprintf("%s %s is a custom resource whose CustomResourceDefinition is not in the input, in crds: or in kiln's catalog: kiln cannot check its fields (add the CRD to the linted files, or name it in crds: in .kiln.yaml, to have every %s judged against its schema)", m.Ref.APIVersion, m.Ref.Kind, m.Ref.Kind)})
	})
}

// builtinLike reports kinds that are not custom resources even though
// admission does not judge them (kiln's own App specs).
func builtinLike(o *manifest.Object) bool {
	return o.Group() == "kiln.dev"
}

// reportNotes reports how kubectl reads the object's YAML.
func reportNotes(p *rules.Pass, o *manifest.Object) {
	for _, n := range o.Notes() {
		pos := n.Pos
		p.Report(rules.Diagnostic{Rule: n.Rule, Object: o, Message: n.Message, Pos: &pos})
	}
}
