package schema_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
	"github.com/kilnhq/kiln/rules/psa"
	"github.com/kilnhq/kiln/rules/schema"
)

// TestFindings lints each fixture of testdata with the schema and Pod
// Security checkers, as kiln lint runs them, and compares every finding
// (position, severity, rule, field, message) with the fixture's golden file
// (go test ./rules/schema -update rewrites them).
func TestFindings(t *testing.T) {
	dual := []string{"10.96.0.0/16", "fd00:10:96::/112"}
	tests := []struct {
		name, fixture string
		serviceCIDRs  []string
	}{
		// The default service network: single-stack IPv4, range not given.
		{"services-default", "services.yaml", nil},
		{"services-ipv4", "services.yaml", []string{"10.96.0.0/16"}},
		{"services-ipv6", "services.yaml", []string{"fd00:10:96::/112"}},
		{"services-dual-stack", "services.yaml", dual},
		{"services-dual-stack-ipv6-primary", "services.yaml", []string{dual[1], dual[0]}},
		{"next", "next.yaml", nil},
		{"one-defect", "one-defect.yaml", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join("testdata", tt.fixture)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			opts := rules.DefaultOptions()
			opts.PSALevel = "baseline" // the fixtures' containers pass it: only what is at stake is reported
			opts.ServiceCIDRs = tt.serviceCIDRs
			res := ruletest.RunAdmitted(t, file, data, opts, schema.Checker, psa.Checker)
			var b strings.Builder
			for _, f := range res.Findings {
				fmt.Fprintf(&b, "%d:%d %s %s %s: %s\n", f.Pos.Line, f.Pos.Column, f.Severity, f.Rule, f.Field, f.Message)
			}
			golden.Check(t, filepath.Join("testdata", tt.name+".golden"), []byte(b.String()))
		})
	}
}
