package psa

import (
	"testing"

	"github.com/kilnhq/kiln/rules"
	"k8s.io/pod-security-admission/policy"
)

// TestRuleExamples checks every rule's documented examples: the failing one
// triggers the rule, the passing one does not, at the check's own level.
func TestRuleExamples(t *testing.T) {
	levels := map[string]string{InvalidLabelRule: "restricted", DecodeRule: "restricted"}
	for _, c := range policy.DefaultChecks() {
		levels[RuleID(c.ID)] = string(c.Level)
		if _, ok := docs[c.ID]; !ok {
			t.Errorf("check %s has no documentation in docs", c.ID)
		}
	}
	if len(Checker.Rules) != len(levels) {
		t.Errorf("%d rules, want %d (one per check plus invalid-label and decode)", len(Checker.Rules), len(levels))
	}
	for _, r := range Checker.Rules {
		t.Run(r.ID, func(t *testing.T) {
			if r.Summary == "" || r.Doc == "" || r.Fail == "" || r.Pass == "" {
				t.Fatalf("rule %s lacks summary, doc or examples", r.ID)
			}
			opts := rules.DefaultOptions()
			opts.PSALevel = levels[r.ID]
			if got := ruleIDs(lint(t, r.Fail, opts), rules.Error); !got[r.ID] {
				t.Errorf("failing example does not trigger %s; got %v\n%s", r.ID, got, r.Fail)
			}
			if got := ruleIDs(lint(t, r.Pass, opts), rules.Info); got[r.ID] {
				t.Errorf("passing example triggers %s\n%s", r.ID, r.Pass)
			}
		})
	}
}
