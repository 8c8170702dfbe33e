package psa

import (
	"maps"
	"slices"

	"github.com/kilnhq/kiln/rules"
)

// fixActions are the checks kiln fix repairs, by rule ID, and how.
var fixActions = map[string]rules.FixAction{
	"psa/runAsNonRoot":              rules.FixRunAsNonRoot,
	"psa/seccompProfile_restricted": rules.FixSeccompRestricted,
	"psa/seccompProfile_baseline":   rules.FixSeccompBaseline,
	"psa/allowPrivilegeEscalation":  rules.FixNoPrivilegeEscalation,
	"psa/capabilities_restricted":   rules.FixCapabilitiesRestricted,
	"psa/capabilities_baseline":     rules.FixCapabilitiesBaseline,
}

// FixableRules lists the psa rules whose findings carry a fix, sorted.
func FixableRules() []string { return slices.Sorted(maps.Keys(fixActions)) }

// fixFor is the fix of a rule's finding on the pod template at path (nil: none).
func fixFor(rule, template string) *rules.Fix {
	a, ok := fixActions[rule]
	if !ok {
		return nil
	}
	return &rules.Fix{Action: a, Template: template}
}
