package psa

import (
	"testing"

	"github.com/kilnhq/kiln/rules"
)

// TestFindingsCarryFixes: the findings of the checks kiln fix repairs
// carry the repair and their pod template; the others carry none.
func TestFindingsCarryFixes(t *testing.T) {
	src := `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      hostNetwork: true
      containers: [{name: a, image: x}]
`
	res := lint(t, src, nil)
	want := map[string]rules.FixAction{
		"psa/runAsNonRoot":              rules.FixRunAsNonRoot,
		"psa/seccompProfile_restricted": rules.FixSeccompRestricted,
		"psa/allowPrivilegeEscalation":  rules.FixNoPrivilegeEscalation,
		"psa/capabilities_restricted":   rules.FixCapabilitiesRestricted,
	}
	seen := map[string]bool{}
	for _, f := range res.Findings {
		seen[f.Rule] = true
		a, fixable := want[f.Rule]
		switch {
		case !fixable && f.Fix != nil:
			t.Errorf("%s carries a fix: %+v", f.Rule, f.Fix)
		case fixable && (f.Fix == nil || f.Fix.Action != a || f.Fix.Template != "spec.template"):
			t.Errorf("%s: fix %+v, want action %s on spec.template", f.Rule, f.Fix, a)
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("no %s finding", id)
		}
	}
	if !seen["psa/hostNamespaces"] {
		t.Error("no psa/hostNamespaces finding (the one without a fix)")
	}
}
