package sidecar_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/rules/internal/ruletest"
	"github.com/kilnhq/kiln/rules/policies"
)

// checker runs the sidecar rules (written as policies in rules/policies).
var checker = policies.NewChecker("sidecar", func(id string) bool { return strings.HasPrefix(id, "sidecar/") })

func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	if len(checker.Rules) != 6 {
		t.Errorf("the policies implement %d sidecar rules, want 6", len(checker.Rules))
	}
	// Every rule has a failing, a passing and a nearest-false-positive fixture.
	for _, r := range checker.Rules {
		dir := filepath.Join("testdata", r.ID[len("sidecar/"):])
		for _, f := range []string{"fail.yaml", "pass.yaml", "near.yaml"} {
			if m, _ := filepath.Glob(filepath.Join(dir, f)); len(m) == 0 {
				t.Errorf("%s: missing fixture %s", r.ID, filepath.Join(dir, f))
			}
		}
	}
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == "seed" {
			continue
		}
		t.Run(f, func(t *testing.T) { ruletest.CheckFixture(t, checker, f) })
	}
}

func TestRuleDocs(t *testing.T) { ruletest.CheckRules(t, checker) }
