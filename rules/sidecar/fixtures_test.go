package sidecar_test

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/rules/internal/ruletest"
	"github.com/kilnhq/kiln/rules/policies"
	"github.com/kilnhq/kiln/rules/sidecar"
)

// asPolicies are the sidecar rules written as policies in rules/policies.
var asPolicies = policies.NewChecker("sidecar-policies", func(id string) bool { return strings.HasPrefix(id, "sidecar/") })

// checker runs every sidecar rule: the policies and the Go checker (sidecar/injected-in-job).
var checker = ruletest.Combine("sidecar", sidecar.Checker, asPolicies)

func TestFixtures(t *testing.T) {
	if len(asPolicies.Rules) == 0 {
		t.Error("no policy implements a sidecar rule")
	}
	ruletest.CheckFixtures(t, checker)
}

func TestRuleDocs(t *testing.T) { ruletest.CheckRules(t, checker) }
