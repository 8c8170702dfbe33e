// Package schema is the "schema" checker: it reports what the admission
// stage (package admit/stage) found of every object on its way in: what the
// API server's create path would refuse or warn about (strict decoding,
// defaulting, validation, served versions, CRD schemas and CEL rules), what
// mutating admission did (mutation/…), at the field's line, and the custom
// resources it could not judge for want of their CRD. It also reports how
// kubectl reads the YAML (yaml/…). The objects every checker judges are
// the admitted ones; this checker changes none.
package schema

import (
	"fmt"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/admit/mutate"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/apiversions"
)

// Checker reports the schema/…, mutation/… and yaml/… rules. It requires
// every context object: what admitting the context found (a binding without
// its policy, a mutation of a Namespace) is reported as it prepares.
var Checker = &rules.Checker{Name: "schema", Rules: append(append([]*rules.Rule(nil), Rules...), mutate.Rules...), Prepare: prepare,
	Requires: []rules.Context{rules.Namespaces, rules.CRDs, rules.Policies, rules.StorageClasses}}

// state is what the checker keeps between objects: the first custom
// resource of each kind whose CRD is missing, and the first object of each
// kind that mutating admission could not evaluate, per cause.
type state struct {
	noCRD  *rules.FirstOfKind
	mutate *rules.FirstOfKind
}

// prepare reports what admitting the context found, judges the objects of
// the --policy files (admitted with the context, never judged otherwise),
// and returns the judge of every other object.
func prepare(p *rules.Pass) (rules.Judge, error) {
	s := &state{noCRD: p.FirstOfKind("no-crd"), mutate: p.FirstOfKind("mutate")}
	given, _ := p.Given(rules.Policies) // files that cannot be read stop the run in the cel checker
	for _, o := range p.Objects {
		s.context(p, o)
	}
	for _, o := range given {
		s.context(p, o)
		s.judge(p, o)
	}
	p.Finish(func() {
		s.reportMutateNotes(p)
		s.reportNoCRD(p)
	})
	return func(o *manifest.Object) { s.judge(p, o) }, nil
}

// context reports what mutating admission said of a context object while
// the context was admitted.
func (s *state) context(p *rules.Pass, o *manifest.Object) {
	if a := o.Admission; a != nil && a.Context {
		s.mutations(p, o, a)
	}
}

// mutations reports what mutating admission said of o and notes what it
// could not evaluate.
func (s *state) mutations(p *rules.Pass, o *manifest.Object, a *manifest.Admission) {
	for _, m := range a.Mutations {
		report(p, o, m)
	}
	for _, n := range a.Notes {
		s.mutate.NoteCause(p, o, n.Cause, "", n.Msg)
	}
}

// judge reports how kubectl reads the object and what admission found of
// it.
func (s *state) judge(p *rules.Pass, o *manifest.Object) {
	reportNotes(p, o)
	a := o.Admission
	if a == nil {
		return // nothing admitted it
	}
	if !a.Context {
		s.mutations(p, o, a)
	}
	if !a.Judged {
		if o.Group() != "" && !builtinLike(o) {
			s.noCRD.Note(p, o, "apiVersion", "")
		}
		return
	}
	for _, pr := range a.Problems {
		if (pr.Rule == admit.RuleUnservedKind || pr.Rule == admit.RuleUnknownKind) && apiversions.RemovedAt(o.APIVersion, o.Kind, p.Options.KubeVersion) {
			continue // api/removed says it, with the migration
		}
		report(p, o, pr)
	}
}

// report reports one problem admission found of o.
func report(p *rules.Pass, o *manifest.Object, pr manifest.Problem) {
	d := rules.Diagnostic{Rule: pr.Rule, Object: o, Field: pr.Field, Message: pr.Message}
	if pr.Warning {
		d.Severity = rules.Warning
	}
	p.Report(d)
}

// reportMutateNotes reports each note of mutating admission once per cause
// and kind, in cause order.
func (s *state) reportMutateNotes(p *rules.Pass) {
	s.mutate.EachCause(func(cause string, m *rules.Mark, msg string, count int) {
		rule, message := mutate.NoteFinding(manifest.KindNote{Cause: cause, Msg: msg}, m.Ref.Kind, count)
		p.Report(rules.Diagnostic{Rule: rule, At: m, Message: message})
	})
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
