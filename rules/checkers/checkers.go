// Package checkers is the one list of kiln's checkers. The CLI lints with
// All, and every test that runs all checkers, or all of kiln's own rules,
// takes its list from here: a checker package imported below runs
// everywhere, and TestEveryCheckerListed fails for one that is not.
package checkers

import (
	"sort"

	"github.com/kilnhq/kiln/rules"

	// Each registers its checker from init.
	"github.com/kilnhq/kiln/rules/apiversions" // api/…: removed and deprecated apiVersions
	_ "github.com/kilnhq/kiln/rules/cel"       // ValidatingAdmissionPolicies in the input and under --policy (cel, unknown-kind)
	_ "github.com/kilnhq/kiln/rules/duplicate" // object/duplicate
	_ "github.com/kilnhq/kiln/rules/jobset"    // jobset/…
	"github.com/kilnhq/kiln/rules/policies"    // kiln's single-object rules, written as ValidatingAdmissionPolicies
	"github.com/kilnhq/kiln/rules/psa"         // Pod Security Admission (psa/…)
	_ "github.com/kilnhq/kiln/rules/schema"    // the API server's create path (schema/…) and kubectl's YAML reading (yaml/…)
	_ "github.com/kilnhq/kiln/rules/sidecar"   // sidecar/injected-in-job
	_ "github.com/kilnhq/kiln/rules/storage"   // storage/…
	_ "github.com/kilnhq/kiln/rules/workload"  // workload/…: image tags, resources, readiness probes, pull policies
)

// notOwn are the checkers that judge as the API server does (schema, psa)
// or apply the user's policies (cel, unknown-kind), rather than kiln's own
// rules.
var notOwn = map[string]bool{"schema": true, "psa": true, "cel": true, "unknown-kind": true}

// All returns every checker kiln lint runs, sorted by name.
func All() []*rules.Checker { return rules.Registered() }

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
