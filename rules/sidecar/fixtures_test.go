package sidecar_test

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/rules/internal/ruletest"
	"github.com/kilnhq/kiln/rules/policies"
)

// checker runs the sidecar rules (written as policies in rules/policies).
var checker = policies.NewChecker("sidecar", func(id string) bool { return strings.HasPrefix(id, "sidecar/") })

func TestFixtures(t *testing.T) {
	if len(checker.Rules) != 6 {
		t.Errorf("the policies implement %d sidecar rules, want 6", len(checker.Rules))
	}
	ruletest.CheckFixtures(t, checker)
}

func TestRuleDocs(t *testing.T) { ruletest.CheckRules(t, checker) }
