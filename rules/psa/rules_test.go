package psa

import (
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"k8s.io/pod-security-admission/policy"
)

// TestRuleExamples checks every rule's documented examples: the failing one
// triggers the rule at the check's own level (and the policy version its
// example names), the passing one does not.
func TestRuleExamples(t *testing.T) {
	levels := map[string]string{InvalidLabelRule: "restricted", DecodeRule: "restricted", NotOnRule: "restricted"}
	versions := map[string]string{}
	for _, c := range policy.DefaultChecks() {
		levels[RuleID(c.ID)] = string(c.Level)
		versions[RuleID(c.ID)] = docs[c.ID].failVersion
		if _, ok := docs[c.ID]; !ok {
			t.Errorf("check %s has no documentation in docs", c.ID)
		}
	}
	if len(Checker.Rules) != len(levels) {
		t.Errorf("%d rules, want %d (one per check plus invalid-label, decode and not-on)", len(Checker.Rules), len(levels))
	}
	for _, r := range Checker.Rules {
		t.Run(r.ID, func(t *testing.T) {
			if r.Summary == "" || r.Doc == "" || r.Fail == "" || r.Pass == "" {
				t.Fatalf("rule %s lacks summary, doc or examples", r.ID)
			}
			opts := rules.DefaultOptions()
			opts.PSALevel = levels[r.ID]
			failOpts := *opts
			if v := versions[r.ID]; v != "" {
				failOpts.PSAVersion = v
			}
			severity := rules.Error
			if r.ID == NotOnRule {
				failOpts.KubeVersion = manifest.KubeVersion{Major: 1, Minor: 22}
				severity = rules.Info
			}
			if got := ruleIDs(lint(t, r.Fail, &failOpts), severity); !got[r.ID] {
				t.Errorf("failing example does not trigger %s; got %v\n%s", r.ID, got, r.Fail)
			}
			if got := ruleIDs(lint(t, r.Pass, opts), rules.Info); got[r.ID] {
				t.Errorf("passing example triggers %s\n%s", r.ID, r.Pass)
			}
		})
	}
}
