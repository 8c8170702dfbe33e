package policies

import (
	"maps"
	"slices"

	"github.com/kilnhq/kiln/rules"
)

// fixers attach kiln fix's repair to the findings of the policies whose
// rule it can repair, as each family offers them (family.fixes).
var fixers = familyFixes()

func familyFixes() map[string]rules.Fixer {
	out := map[string]rules.Fixer{}
	for _, f := range families {
		maps.Copy(out, f.fixes)
	}
	return out
}

// FixableRules lists the rules of the policies whose findings carry a fix, sorted.
func FixableRules() []string { return slices.Sorted(maps.Keys(fixers)) }
