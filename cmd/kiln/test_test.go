package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTestCommand runs kiln test as a user does: the exit code says whether
// every case passed (0), one failed (1) or a test file is broken (2).
func TestTestCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"test", "../../admit/policytest/testdata/readme"}, 0, "kiln test: 7 passed, 0 failed (1 test file)"},
		// MutatingAdmissionPolicies are evaluated (admit/mutate).
		{[]string{"test", "../../admit/policytest/testdata/kyverno/map"}, 0, "kiln test: 1 passed, 0 failed (1 test file)"},
		{[]string{"test", "-f", "json", "../../admit/policytest/testdata/outputs"}, 1, `"failed": 3`},
		{[]string{"test", "../../admit/policytest/testdata/outputs/cluster.yaml"}, 2, "cluster.yaml:7:1: a second YAML document"},
		{[]string{"test", "testdata"}, 2, "no test files under testdata"},
		{[]string{"test", "-f", "sarif", "../../admit/policytest/testdata/readme"}, 2, `unknown format "sarif"`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errOut)
		all := out.String() + errOut.String()
		want := strings.TrimSuffix(tc.want, "…")
		if code != tc.code || !strings.Contains(all, want) {
			t.Errorf("kiln %s: exit %d (want %d), output lacks %q:\n%s", strings.Join(tc.args, " "), code, tc.code, want, all)
		}
	}
}
