package main

import (
	"encoding/json"
	"fmt"
	"github.com/kilnhq/kiln/manifest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/rules/policies"
)

// jsonReport is the part of the JSON report (version 1) the tests compare.
type jsonReport struct {
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
		File     string `json:"file"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Object   struct {
			APIVersion, Kind, Namespace, Name string
		} `json:"object"`
		Field string `json:"field"`
	} `json:"findings"`
}

func lintJSON(t *testing.T, args ...string) jsonReport {
	t.Helper()
	code, out, errOut := runKiln(t, "", append([]string{"lint", "--format", "json"}, args...)...)
	if code != exitOK && code != exitFindings {
		t.Fatalf("kiln lint %v: exit %d: %s", args, code, errOut)
	}
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("kiln lint %v: %v\n%s", args, err, out)
	}
	return r
}

func TestPoliciesExportGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"deny-audit-selector-1.33", []string{"--action", "Deny,Audit", "--namespace-selector", "env=prod,team!=ml,tier in (api,web),!legacy", "--kube-version", "1.33"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runKiln(t, "", append([]string{"policies", "export"}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if tc.name != "default" {
				// The policies are the embedded files, verbatim, in both
				// cases: keep only the default's copy in a golden file.
				out = withoutPolicies(t, out)
			}
			golden.Check(t, "testdata/policies-export-"+tc.name+".golden", []byte(out))
			_, again, _ := runKiln(t, "", append([]string{"policies", "export"}, tc.args...)...)
			if tc.name != "default" {
				again = withoutPolicies(t, again)
			}
			if again != out {
				t.Error("export is not deterministic")
			}
		})
	}
}

// withoutPolicies replaces each ValidatingAdmissionPolicy of an export by
// a comment naming it, after checking that it is the embedded file.
func withoutPolicies(t *testing.T, out string) string {
	t.Helper()
	src := map[string]string{}
	for _, p := range policies.All() {
		src[p.Name] = string(p.Source)
	}
	docs := strings.Split(out, "---\n")
	n := 0
	for i, d := range docs {
		if !strings.Contains(d, "\nkind: ValidatingAdmissionPolicy\n") {
			continue
		}
		n++
		name := regexp.MustCompile(`(?m)^  name: (\S+)$`).FindStringSubmatch(d)
		if name == nil || src[name[1]] != d {
			t.Errorf("document %d is not an embedded policy:\n%s", i, d)
			continue
		}
		docs[i] = "# ValidatingAdmissionPolicy " + name[1] + " (embedded, verbatim)\n"
	}
	if n != len(src) {
		t.Errorf("%d policies in the export, want %d", n, len(src))
	}
	return strings.Join(docs, "---\n")
}

func TestPoliciesExportUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--action", "Deny,Warn"}, "Deny and Warn together"},
		{[]string{"--action", "Block"}, `unknown validation action "Block"`},
		{[]string{"--action", "Warn", "--action", "warn"}, "given twice"},
		{[]string{"--namespace-selector", "env>3"}, "no namespaceSelector form"},
		{[]string{"--namespace-selector", "env in prod"}, "--namespace-selector"},
		{[]string{"--kube-version", "1.2"}, "outside the range"},
		// The policies need 1.33: an older server would refuse them.
		{[]string{"--kube-version", "1.32"}, "a Kubernetes 1.32 API server would refuse to create 13 of the 13 policies (kiln-"},
		{[]string{"--kube-version", "1.29"}, "does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy"},
		{[]string{"extra"}, "unknown command"},
	} {
		code, out, errOut := runKiln(t, "", append([]string{"policies", "export"}, tc.args...)...)
		if code != exitInput || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2, nothing printed, stderr with %q", tc.args, code, len(out), errOut, tc.want)
		}
	}
}

// TestPoliciesExportLintsClean: what export prints is valid input for kiln
// lint and has no finding (the cel checker loads the policies, bindings and
// params without a setup problem).
func TestPoliciesExportLintsClean(t *testing.T) {
	for _, args := range [][]string{nil, {"--action", "Deny,Audit", "--namespace-selector", "env=prod,team!=ml", "--kube-version", "1.33"}} {
		code, out, errOut := runKiln(t, "", append([]string{"policies", "export"}, args...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		file := filepath.Join(t.TempDir(), "kiln-policies.yaml")
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		r := lintJSON(t, file)
		for _, f := range r.Findings {
			t.Errorf("%v: %s:%d %s %s", args, f.File, f.Line, f.Rule, f.Message)
		}
		if n := strings.Count(out, "\nkind: ValidatingAdmissionPolicyBinding\n"); n != len(policies.All()) {
			t.Errorf("%d bindings for %d policies", n, len(policies.All()))
		}
	}
}

var kubeComment = regexp.MustCompile(`(?m)^#.*?kube-version[:=]?\s*(\S+)`)

// TestPoliciesExportRoundTrip lints each fixture of the rules written as
// policies twice:
//
//	A: kiln lint --kube-version V FILE (the built-in rules)
//	B: kiln lint --kube-version V --config C --policy P FILE, where P is
//	   `kiln policies export --action ACTIONS --kube-version V` and C turns
//	   the built-in rules off
//
// and asserts that the findings are the same: every finding of B is either
// a finding of A that is not from a policy rule (PSA, torchrun, …,
// unchanged), or, for each action, one of A's policy findings with the rule
// policy/<policy name> instead of the policy's kiln.dev/rule, the action's
// severity (Deny → error, Warn → warning, Audit → info) instead of the
// rule's, and the message behind the server's text for that action and
// binding ("ValidatingAdmissionPolicy '<p>' with binding '<p>' denied
// request: ", "Validation failed for ValidatingAdmissionPolicy '<p>' with
// binding '<p>': ", "Audit: validation failed for …: "); file, line,
// column, object and field are equal. B's policy/unknown-kind warnings
// (JobSet is not a built-in kind and the fixtures carry no CRD) are the only
// other findings allowed.
func TestPoliciesExportRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("lints about 60 fixtures several times")
	}
	none := noConfig(t)
	var files []string
	for _, p := range []string{"sidecar", "jobset", "storage"} {
		m, _ := filepath.Glob("../../rules/" + p + "/testdata/*/*.yaml")
		files = append(files, m...)
	}
	slices.Sort(files)
	ruleOf := map[string]string{} // policy name → rule ID
	var off strings.Builder
	off.WriteString("rules:\n")
	for _, r := range policies.Rules() {
		fmt.Fprintf(&off, "  %s: off\n", r.ID)
	}
	for _, p := range policies.All() {
		ruleOf[p.Name] = p.Rule
	}
	dir := t.TempDir()
	config := filepath.Join(dir, ".kiln.yaml")
	if err := os.WriteFile(config, []byte(off.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	severityOf := map[string]string{"Deny": "error", "Warn": "warning", "Audit": "info"}
	prefixOf := map[string]string{
		"Deny":  "ValidatingAdmissionPolicy '%[1]s' with binding '%[1]s' denied request: ",
		"Warn":  "Validation failed for ValidatingAdmissionPolicy '%[1]s' with binding '%[1]s': ",
		"Audit": "Audit: validation failed for ValidatingAdmissionPolicy '%[1]s' with binding '%[1]s': ",
	}
	seen := map[string]int{} // policy rule → findings in A
	for _, actions := range [][]string{{"Warn"}, {"Deny", "Audit"}} {
		exported := map[string]string{} // kube version → export file
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			kube := "1.37"
			if m := kubeComment.FindSubmatch(data); m != nil {
				kube = string(m[1])
			}
			if v, _ := manifest.ParseKubeVersion(kube); v.Less(manifest.KubeVersion{Major: 1, Minor: 33}) {
				// Below 1.33 the API server refuses the exported policies
				// (below 1.30 it serves no ValidatingAdmissionPolicy version
				// by default; before 1.33 its CEL has no two-variable
				// comprehensions), and so does kiln policies export. Nothing
				// to round-trip.
				continue
			}
			if exported[kube] == "" {
				code, out, errOut := runKiln(t, "", "policies", "export", "--action", strings.Join(actions, ","), "--kube-version", kube)
				if code != exitOK {
					t.Fatalf("export: exit %d: %s", code, errOut)
				}
				exported[kube] = filepath.Join(dir, strings.Join(actions, "-")+"-"+kube+".yaml")
				if err := os.WriteFile(exported[kube], []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			a := lintJSON(t, "--kube-version", kube, "--config", none, file)
			b := lintJSON(t, "--kube-version", kube, "--config", config, "--policy", exported[kube], file)

			var want, got []string
			key := func(rule, sev, msg string, f any) string {
				return fmt.Sprintf("%v | %s %s | %s", f, rule, sev, msg)
			}
			for _, f := range a.Findings {
				where := fmt.Sprintf("%s:%d:%d %v %s", f.File, f.Line, f.Column, f.Object, f.Field)
				if !isPolicyRule(f.Rule) {
					want = append(want, key(f.Rule, f.Severity, f.Message, where))
					continue
				}
				seen[f.Rule]++
				for _, act := range actions {
					want = append(want, key(f.Rule, severityOf[act], fmt.Sprintf("%s|%s", act, f.Message), where))
				}
			}
			for _, f := range b.Findings {
				where := fmt.Sprintf("%s:%d:%d %v %s", f.File, f.Line, f.Column, f.Object, f.Field)
				name, isPolicy := strings.CutPrefix(f.Rule, "policy/")
				switch {
				case f.Rule == "policy/unknown-kind" && f.Object.Kind == "JobSet":
					continue
				case strings.HasPrefix(f.Rule, "schema/") && strings.HasPrefix(f.Object.APIVersion, "admissionregistration.k8s.io/"):
					// The exported policies themselves: below 1.30 no release
					// serves a ValidatingAdmissionPolicy version by default.
					continue
				case isPolicy && ruleOf[name] != "":
					act := ""
					for _, x := range actions {
						if strings.HasPrefix(f.Message, fmt.Sprintf(prefixOf[x], name)) && severityOf[x] == f.Severity {
							act = x
						}
					}
					if act == "" {
						t.Errorf("%s: %s %s: message without the server's text for %v: %s", file, f.Rule, f.Severity, actions, f.Message)
						continue
					}
					got = append(got, key(ruleOf[name], f.Severity, act+"|"+strings.TrimPrefix(f.Message, fmt.Sprintf(prefixOf[act], name)), where))
				default:
					got = append(got, key(f.Rule, f.Severity, f.Message, where))
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s (kube %s, actions %v): findings differ\nbuilt-in:\n\t%s\nexported:\n\t%s", file, kube, actions, strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
			}
		}
	}
	for _, r := range policies.Rules() {
		// sidecar/needs-1.29 fires only below 1.29, where no policy version is served.
		if seen[r.ID] == 0 && r.ID != "sidecar/needs-1.29" {
			t.Errorf("%s: no fixture finding took part in the round trip", r.ID)
		}
	}
}

func isPolicyRule(id string) bool {
	for _, r := range policies.Rules() {
		if r.ID == id {
			return true
		}
	}
	return false
}
