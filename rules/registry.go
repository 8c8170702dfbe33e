package rules

import "sort"

// AllRules returns the rules the checkers know up front (Rules and
// Declares), sorted by ID.
func AllRules(checkers []*Checker) []*Rule {
	var out []*Rule
	for _, c := range checkers {
		out = append(append(out, c.Rules...), c.Declares...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
