package report

import (
	"github.com/kilnhq/kiln/internal/plural"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/rules"
)

// severities are the severities reports show, most severe first.
var severities = []rules.Severity{rules.Error, rules.Warning, rules.Info}

// counts are findings counted by severity, suppressed ones apart.
type counts struct {
	Error, Warning, Info, Suppressed int
	// Baselined counts the findings a baseline holds (in no other count).
	Baselined int
}

// add counts one finding.
func (c *counts) add(f rules.Finding) {
	switch {
	case f.Suppressed != nil:
		c.Suppressed++
	case f.Baselined:
		c.Baselined++
	case f.Severity == rules.Error:
		c.Error++
	case f.Severity == rules.Warning:
		c.Warning++
	default:
		c.Info++
	}
}

// of returns the count of unsuppressed findings of one severity.
func (c counts) of(s rules.Severity) int {
	switch s {
	case rules.Error:
		return c.Error
	case rules.Warning:
		return c.Warning
	}
	return c.Info
}

// Active counts the unsuppressed findings.
func (c counts) Active() int { return c.Error + c.Warning + c.Info }

// group is one row of a table or chart: a name and its counts.
type group struct {
	Name string
	counts
}

// tally counts a run's findings by family (the rule ID's part before the
// slash), by namespace and by rule.
type tally struct {
	all        counts
	families   map[string]*counts
	namespaces map[string]*counts
	rules      map[string]*counts
	firstOf    map[string]rules.Finding // each rule's first unsuppressed finding, in engine order
}

func newTally() *tally {
	return &tally{families: map[string]*counts{}, namespaces: map[string]*counts{},
		rules: map[string]*counts{}, firstOf: map[string]rules.Finding{}}
}

func (t *tally) add(f rules.Finding) {
	t.all.add(f)
	bump(t.families, family(f.Rule), f)
	bump(t.namespaces, namespaceOf(f), f)
	bump(t.rules, f.Rule, f)
	if _, ok := t.firstOf[f.Rule]; !ok && f.Suppressed == nil && !f.Baselined {
		t.firstOf[f.Rule] = f
	}
}

func bump(m map[string]*counts, key string, f rules.Finding) {
	c := m[key]
	if c == nil {
		c = &counts{}
		m[key] = c
	}
	c.add(f)
}

// tallyOf counts every finding of res.
func tallyOf(res *rules.Result) (*tally, error) {
	t := newTally()
	err := res.Each(func(f rules.Finding) error {
		t.add(f)
		return nil
	})
	return t, err
}

// family is the part of a rule ID before its first slash ("psa" of
// "psa/runAsNonRoot"); an ID without one is its own family.
func family(rule string) string {
	fam, _, _ := strings.Cut(rule, "/")
	return fam
}

// noNamespace names the namespace of findings about cluster-scoped
// objects, objects that name no namespace, and no object at all.
const noNamespace = "(no namespace)"

// namespaceOf is the namespace a finding is about: its object's, else the
// one whose Pod Security level was assumed to judge it.
func namespaceOf(f rules.Finding) string {
	switch {
	case f.Object.Namespace != "":
		return f.Object.Namespace
	case f.AssumedNamespace != "":
		return f.AssumedNamespace
	}
	return noNamespace
}

// ranked returns m's groups, those with the most unsuppressed errors first,
// then warnings, then infos, then suppressed, then by name; groups with
// nothing unsuppressed are left out when activeOnly.
func ranked(m map[string]*counts, activeOnly bool) []group {
	out := make([]group, 0, len(m))
	for name, c := range m {
		if activeOnly && c.Active() == 0 {
			continue
		}
		out = append(out, group{Name: name, counts: *c})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Error != b.Error:
			return a.Error > b.Error
		case a.Warning != b.Warning:
			return a.Warning > b.Warning
		case a.Info != b.Info:
			return a.Info > b.Info
		case a.Suppressed != b.Suppressed:
			return a.Suppressed > b.Suppressed
		}
		return a.Name < b.Name
	})
	return out
}

// capGroups keeps the first most groups and sums the rest into one named
// "n others" (so that a chart or a table stays readable).
func capGroups(gs []group, most int) []group {
	if len(gs) <= most {
		return gs
	}
	rest := group{Name: plural.Count(len(gs)-most+1, "other")}
	for _, g := range gs[most-1:] {
		rest.Error += g.Error
		rest.Warning += g.Warning
		rest.Info += g.Info
		rest.Suppressed += g.Suppressed
	}
	return append(gs[:most-1:most-1], rest)
}
