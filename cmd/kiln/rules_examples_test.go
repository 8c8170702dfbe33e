package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/session"
)

// alsoReported lists, for a rule, the other rules its Fail example cannot
// help reporting at warning or error, with the reason.
var alsoReported = map[string]map[string]string{
	"psa/decode":             {"schema/type": "a value the server cannot decode is the server's error too"},
	"psa/windowsHostProcess": {"psa/hostNamespaces": "the server's validation wants hostNetwork: true on a HostProcess pod"},
	"sidecar/probe-on-init":  {"schema/invalid": "the server's validation refuses the probe; the rule says why"},
	"storage/inline-nfs":     {"psa/restrictedVolumes": "the restricted profile (kiln's default level) forbids nfs volumes"},
	"workload/pull-policy":   {"workload/image-tag": "an image whose tag moves is an image not pinned"},
}

// brevity are the warnings any rule's examples may show besides their own,
// with the reason: the examples leave out what is not their point.
var brevity = map[string]string{
	"workload/resources": "the examples of the other families leave out containers' resources, to show only their point",
}

// TestRuleExamples: what `kiln explain` prints is true, linted as printed
// (`kiln lint -` on exactly that YAML, with the flags its header names and
// its heading shows). Every rule's Fail example reports that rule, exits 1
// when the rule is an error, and reports no other rule at warning or error
// (but those alsoReported names); its Pass example exits 0 and reports
// nothing, not even an info. Either may show the warnings brevity names,
// never of the rule's own family. And every rule kiln can report is listed
// (kiln rules), with both examples.
func TestRuleExamples(t *testing.T) {
	all, err := session.Rules(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range all {
		ids[r.ID] = true
	}
	for _, id := range []string{"policy/unknown-kind", "kiln/unused-ignore", "object/duplicate", "sidecar/injected-in-job", "jobset/rwo-claim-policy"} {
		if !ids[id] {
			t.Errorf("kiln rules does not list %s", id)
		}
	}
	// Rules no input triggers on purpose, with the reason.
	untriggerable := map[string]string{
		"schema/internal": "reports a failure of the API server's code inside kiln",
	}
	checked := 0
	for _, r := range all {
		if _, ok := untriggerable[r.ID]; ok {
			continue
		}
		if r.Fail == "" || r.Pass == "" {
			t.Errorf("%s: no Fail or Pass example", r.ID)
			continue
		}
		checked++
		for _, ex := range []struct {
			name, yaml string
			fails      bool
		}{{"Fails", r.Fail, true}, {"Passes", r.Pass, false}} {
			args := append([]string{"lint", "-f", "json"}, report.ExampleFlags(ex.yaml)...)
			if r.Off {
				// A rule off by default is judged as a team that turned it on.
				cfg := filepath.Join(t.TempDir(), ".kiln.yaml")
				if err := os.WriteFile(cfg, []byte("rules:\n  "+r.ID+": on\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", cfg)
			}
			args = append(args, "-")
			cmd := "kiln " + strings.Join(args, " ")
			code, out, errOut := runKiln(t, ex.yaml, args...)
			if code == exitInput {
				t.Errorf("%s %s example: %s: exit 2: %s", r.ID, ex.name, cmd, errOut)
				continue
			}
			var rep struct {
				Findings []struct{ Rule, Severity, Message string } `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%s: %v\n%s", r.ID, err, out)
			}
			found := false
			var others []string
			for _, f := range rep.Findings {
				switch {
				case f.Rule == r.ID:
					found = true
					continue
				case ex.fails && f.Severity == "info":
					continue
				case ex.fails && alsoReported[r.ID][f.Rule] != "":
					continue
				case brevity[f.Rule] != "" && f.Severity == "warning" && family(f.Rule) != family(r.ID):
					continue
				}
				others = append(others, f.Severity+" "+f.Rule+": "+f.Message)
			}
			switch {
			case ex.fails && !found:
				t.Errorf("%s Fails example (%s) does not report the rule; findings %v", r.ID, cmd, rep.Findings)
			case ex.fails && r.Severity == rules.Error && code != exitFindings:
				t.Errorf("%s Fails example (%s) exits %d, want %d (the rule is an error)", r.ID, cmd, code, exitFindings)
			case ex.fails && len(others) > 0:
				t.Errorf("%s Fails example (%s) reports other rules too:\n\t%s", r.ID, cmd, strings.Join(others, "\n\t"))
			case !ex.fails && (found || code != 0 || len(others) > 0):
				t.Errorf("%s Passes example (%s) exits %d, want 0 with no finding:\n\t%s", r.ID, cmd, code, strings.Join(others, "\n\t"))
			}
		}
	}
	t.Logf("%d rules' examples checked", checked)
}

// TestExplainPrintsCommand: an example that needs flags is printed under a
// heading with the command it behaves as labelled with.
func TestExplainPrintsCommand(t *testing.T) {
	tests := []struct{ rule, want string }{
		{"api/deprecated", "Fails (kiln lint --kube-version 1.24 -):\n\n    # kiln lint --kube-version 1.24\n"},
		{"api/deprecated", "Passes (kiln lint --kube-version 1.24 -):\n"},
		{"psa/procMount", "Fails (kiln lint --psa-level baseline --psa-version v1.34 -):\n"},
		{"psa/runAsNonRoot", "Fails:\n"},
	}
	for _, tt := range tests {
		code, out, errOut := runKiln(t, "", "explain", tt.rule)
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("kiln explain %s: exit %d, stderr %q; want the output to contain %q:\n%s", tt.rule, code, errOut, tt.want, out)
		}
	}
}

// family is a rule ID's family: workload of workload/resources.
func family(id string) string {
	f, _, _ := strings.Cut(id, "/")
	return f
}
