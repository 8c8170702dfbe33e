package fix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// A fix is re-judged before it is written: Run makes every repair, judges
// the input with the new content, and a repair after which the object has
// a finding it did not have before (the API server would refuse it, or a
// rule it passed now fails) is not made; the object's other repairs are.
// This file finds the new findings and the repairs that made them.

// FindingKey is a finding as the re-judgement compares it: by file,
// object (its group, not its version: api/removed's repair changes the
// version) and rule. Not by position, which a repair moves, nor by
// message, which a repair changes without making anything worse: a
// finding that names the containers still at fault names fewer, one that
// points at another object's line ("first at file:12") moves with it. An
// object has a new finding when it has more findings of a rule than before.
type FindingKey struct {
	File, Group, Kind, Namespace, Name string
	Rule                               string
}

// KeyOf is the key of a finding.
func KeyOf(f rules.Finding) FindingKey {
	return FindingKey{File: f.Pos.File, Group: group(f.Object.APIVersion), Kind: f.Object.Kind,
		Namespace: f.Object.Namespace, Name: f.Object.Name, Rule: f.Rule}
}

func group(apiVersion string) string {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// Counted is a multiset of the active findings of a result by key.
type Counted map[FindingKey]int

// CountFindings counts the active (not suppressed, not baselined) findings of res.
func CountFindings(res *rules.Result) (Counted, error) {
	c := Counted{}
	err := res.Each(func(f rules.Finding) error {
		if f.Suppressed == nil && !f.Baselined {
			c[KeyOf(f)]++
		}
		return nil
	})
	return c, err
}

// NewFindings are the active findings of after that before does not hold
// (as many times), in after's order.
func NewFindings(before Counted, after *rules.Result) ([]rules.Finding, error) {
	left := Counted{}
	for k, n := range before {
		left[k] = n
	}
	var out []rules.Finding
	err := after.Each(func(f rules.Finding) error {
		if f.Suppressed != nil || f.Baselined {
			return nil
		}
		k := KeyOf(f)
		if left[k] > 0 {
			left[k]--
			return nil
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// unit is one repair of one object: the file and object it is made on
// and the Fix.
type unit struct {
	obj objectKey
	fix rules.Fix
}

// versionless is an object's key with its apiVersion cut to the group, to
// match an object before and after its apiVersion was repaired.
func versionless(k objectKey) objectKey {
	k.ref.APIVersion = group(k.ref.APIVersion)
	return k
}

// refusal is a repair not made and the new finding it would have made.
type refusal struct {
	pos    manifest.Position
	object manifest.Ref
	rule   string
	fix    rules.Fix
	why    rules.Finding
}

func (r *refusal) String() string {
	return fmt.Sprintf("%s: %s: %s: not repaired: %s, but then %s: %s", r.pos, r.rule, r.object,
		r.fix.Describe(), r.why.Rule, r.why.Message)
}

// plan is the repairs Run makes: the placed findings' repairs, less the
// refused ones.
type plan struct {
	p       *placed
	refused map[unit]*refusal
	// judged holds the refused repairs by the object they were judged on
	// (versionless), to take them from the findings that remain.
	judged map[unit]bool
	// trial, while set, limits the repairs of the objects it names to the
	// ones it holds.
	trial map[objectKey]map[rules.Fix]bool
}

func newPlan(p *placed) *plan {
	return &plan{p: p, refused: map[unit]*refusal{}, judged: map[unit]bool{}}
}

// unitOf is the repair of the i-th placed finding (ok false: none).
func (pl *plan) unitOf(i int) (unit, bool) {
	f := pl.p.findings[i]
	if f.Fix == nil || f.Suppressed != nil {
		return unit{}, false
	}
	return unit{objectKey{f.Pos.File, f.Object}, *f.Fix}, true
}

// findings are the placed findings whose repairs the plan makes.
func (pl *plan) findings() []rules.Finding {
	var out []rules.Finding
	for i, f := range pl.p.findings {
		if u, ok := pl.unitOf(i); ok {
			if pl.refused[u] != nil {
				continue
			}
			if t, ok := pl.trial[u.obj]; ok && !t[u.fix] {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// units lists the repairs not refused of the objects that had the new
// findings (by their judged object, versionless), by the object they are
// made on, in the findings' order.
func (pl *plan) units(news map[objectKey][]rules.Finding) map[objectKey][]unit {
	out := map[objectKey][]unit{}
	seen := map[unit]bool{}
	for i := range pl.p.findings {
		u, ok := pl.unitOf(i)
		if !ok || seen[u] || pl.refused[u] != nil || len(news[versionless(pl.p.origin[i])]) == 0 {
			continue
		}
		seen[u] = true
		out[u.obj] = append(out[u.obj], u)
	}
	return out
}

// newOn are the new findings on the objects a placed object was judged as.
func (pl *plan) newOn(obj objectKey, news map[objectKey][]rules.Finding) []rules.Finding {
	var out []rules.Finding
	seen := map[objectKey]bool{}
	for i := range pl.p.findings {
		u, ok := pl.unitOf(i)
		k := versionless(pl.p.origin[i])
		if !ok || u.obj != obj || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, news[k]...)
	}
	return out
}

// refuse marks a repair refused for the new finding it made.
func (pl *plan) refuse(u unit, why rules.Finding) {
	r := &refusal{fix: u.fix, why: why}
	for i := range pl.p.findings {
		if v, ok := pl.unitOf(i); ok && v == u {
			f := pl.p.findings[i]
			if r.rule == "" {
				r.pos, r.object, r.rule = f.Pos, f.Object, f.Rule
			}
			pl.judged[unit{versionless(pl.p.origin[i]), u.fix}] = true
		}
	}
	pl.refused[u] = r
}

// wasRefused reports whether the repair a finding of a judgement carries
// was refused (matched by the object it was judged on).
func (pl *plan) wasRefused(f rules.Finding) bool {
	return f.Fix != nil && pl.judged[unit{versionless(objectKey{f.Pos.File, f.Object}), *f.Fix}]
}

// refusals are the plan's refused repairs, one line each, sorted.
func (pl *plan) refusals() []string {
	var out []string
	for _, r := range pl.refused {
		out = append(out, r.String())
	}
	sort.Strings(out)
	return out
}

// byObject groups findings by the object they are on (versionless).
func byObject(fs []rules.Finding) map[objectKey][]rules.Finding {
	out := map[objectKey][]rules.Finding{}
	for _, f := range fs {
		k := versionless(objectKey{f.Pos.File, f.Object})
		out[k] = append(out[k], f)
	}
	return out
}
