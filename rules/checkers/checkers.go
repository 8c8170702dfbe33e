// Package checkers is the one list of kiln's checkers. The CLI lints with
// All, and every test that runs all checkers, or all of kiln's own rules,
// takes its list from here: a checker listed below runs everywhere, and
// TestEveryCheckerListed fails for a family whose checker is not.
package checkers

import (
	"sort"

	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/apiversions"
	"github.com/kilnhq/kiln/rules/cel"
	"github.com/kilnhq/kiln/rules/duplicate"
	"github.com/kilnhq/kiln/rules/jobset"
	"github.com/kilnhq/kiln/rules/policies"
	"github.com/kilnhq/kiln/rules/psa"
	"github.com/kilnhq/kiln/rules/schema"
	"github.com/kilnhq/kiln/rules/sidecar"
	"github.com/kilnhq/kiln/rules/storage"
	"github.com/kilnhq/kiln/rules/workload"
)

// all is the list of checkers (each family's package doc says what it
// judges). A new family adds its checker here.
var all = []*rules.Checker{
	apiversions.Checker,
	cel.Checker,
	cel.UnknownKind,
	duplicate.Checker,
	jobset.Checker,
	policies.Checker,
	psa.Checker,
	schema.Checker,
	sidecar.Checker,
	storage.Checker,
	workload.Checker,
}

// notOwn are the checkers that judge as the API server does (schema, psa)
// or apply the user's policies (cel, unknown-kind), rather than kiln's own
// rules.
var notOwn = map[string]bool{"schema": true, "psa": true, "cel": true, "unknown-kind": true}

// All returns every checker kiln lint runs, sorted by name.
func All() []*rules.Checker {
	out := append([]*rules.Checker(nil), all...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Rules returns the rules every checker knows up front, sorted by ID.
func Rules() []*rules.Rule { return rules.AllRules(all) }

// Own returns the checkers of kiln's own rules: All without the API
// server's checks and the user's policies, sorted by name.
func Own() []*rules.Checker {
	var out []*rules.Checker
	for _, c := range All() {
		if !notOwn[c.Name] {
			out = append(out, c)
		}
	}
	return out
}

// Fixable lists, sorted, the rules whose findings may carry a fix
// (rules.Fix) that kiln fix applies.
func Fixable() []string {
	out := append(append(append([]string(nil), psa.FixableRules()...), policies.FixableRules()...), apiversions.FixableRules()...)
	sort.Strings(out)
	return out
}

// IsFixable reports whether a rule's findings may carry a fix.
func IsFixable(rule string) bool {
	for _, id := range Fixable() {
		if id == rule {
			return true
		}
	}
	return false
}
