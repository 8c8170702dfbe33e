// Package schema is the "schema" checker: before any other rule runs, it
// sends every object through the API server's create path (package admit:
// strict decoding, defaulting, validation, served versions, CRD schemas and
// CEL rules), reports what the server would refuse or warn about at the
// field's line, and leaves each object holding the object the server would
// admit, which Pod Security, the policies and kiln's own rules then judge.
// It also reports how kubectl reads the YAML (yaml/…).
package schema

import (
	"sort"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/apiversions"
)

// Checker admits every object and reports the schema/… and yaml/… rules.
var Checker = &rules.Checker{Name: "schema", Rules: Rules, Before: before}

func init() { rules.Register(Checker) }

func before(p *rules.Pass) error {
	objs := p.Objects
	if len(p.Options.Policies) > 0 {
		// The policies of --policy files are judged too: one the server
		// refuses is reported here and never applied (rules/cel).
		set := manifest.Read(p.Options.Policies, nil)
		objs = append(append([]*manifest.Object(nil), objs...), set.Objects()...)
	}
	kinds := manifest.BuiltinKinds()
	kinds.AddCRDs(objs)
	a := admit.New(objs, kinds, admit.Options{KubeVersion: p.Options.KubeVersion, User: p.Options.User, Groups: p.Options.Groups})
	results := make([]admit.Result, len(objs))
	rules.EachParallel(len(objs), func(i int) { results[i] = a.Admit(objs[i]) })
	noCRD := map[string]*manifest.Object{}
	for i, o := range objs {
		reportNotes(p, o)
		r := results[i]
		if !r.Judged {
			if o.Group() != "" && !builtinLike(o) {
				key := o.APIVersion + "/" + o.Kind
				if _, seen := noCRD[key]; !seen {
					noCRD[key] = o
				}
			}
			continue
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
	keys := make([]string, 0, len(noCRD))
	for k := range noCRD {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o := noCRD[k]
		p.Reportf(admit.RuleNoCRD, o, "apiVersion", "%s %s is a custom resource whose CustomResourceDefinition is not in the input: kiln cannot check its fields (add the CRD to the linted files to have every %s judged against its schema)", o.APIVersion, o.Kind, o.Kind)
	}
	return nil
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
