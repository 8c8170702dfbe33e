package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exampleArgs returns the kiln lint flags an example's header comment names:
// "# kiln lint --psa-level baseline" or "# kube-version: 1.28".
func exampleArgs(example string) []string {
	var args []string
	for _, line := range strings.Split(example, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		c := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		if rest, ok := strings.CutPrefix(c, "kiln lint"); ok {
			args = append(args, strings.Fields(rest)...)
		} else if v, ok := strings.CutPrefix(c, "kube-version:"); ok {
			args = append(args, "--kube-version", strings.TrimSpace(v))
		}
	}
	return args
}

// TestRuleExamples: what `kiln explain` prints is true. Every rule's Fail
// example, linted with the flags its header names, reports that rule; its
// Pass example reports no finding of that rule. And every rule kiln can
// report is listed (kiln rules), with both examples.
func TestRuleExamples(t *testing.T) {
	all := everyRule()
	ids := map[string]bool{}
	for _, r := range all {
		ids[r.ID] = true
	}
	for _, id := range []string{"policy/unknown-kind", "kiln/unused-ignore", "object/duplicate", "sidecar/injected-in-job", "jobset/rwo-claim-policy"} {
		if !ids[id] {
			t.Errorf("kiln rules does not list %s", id)
		}
	}
	dir := t.TempDir()
	checked, passExit1 := 0, 0
	defer func() {
		t.Logf("%d rules' examples checked; %d Pass examples exit 1 on other rules' errors", checked, passExit1)
	}()
	// Rules no input triggers on purpose, with the reason.
	untriggerable := map[string]string{
		"schema/internal": "reports a failure of the API server's code inside kiln",
	}
	for _, r := range all {
		if _, ok := untriggerable[r.ID]; ok {
			continue
		}
		if r.Fail == "" || r.Pass == "" {
			t.Errorf("%s: no Fail or Pass example", r.ID)
			continue
		}
		for _, ex := range []struct {
			name, yaml string
			want       bool
		}{{"fail", r.Fail, true}, {"pass", r.Pass, false}} {
			file := filepath.Join(dir, strings.ReplaceAll(r.ID, "/", "_")+"."+ex.name+".yaml")
			if err := os.WriteFile(file, []byte(ex.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{"lint", "-f", "json"}, exampleArgs(ex.yaml)...), file)
			code, out, errOut := runKiln(t, "", args...)
			if code == exitInput {
				t.Errorf("%s %s example: kiln %s: exit 2: %s", r.ID, ex.name, strings.Join(args, " "), errOut)
				continue
			}
			var rep struct {
				Findings []struct{ Rule string } `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%s: %v\n%s", r.ID, err, out)
			}
			checked += map[bool]int{true: 1}[ex.want]
			if !ex.want && code == exitFindings {
				passExit1++
				var others []string
				for _, f := range rep.Findings {
					others = append(others, f.Rule)
				}
				t.Logf("%s Pass example exits 1: %v", r.ID, others)
			}
			found := false
			for _, f := range rep.Findings {
				found = found || f.Rule == r.ID
			}
			if found != ex.want {
				t.Errorf("%s %s example (kiln %s): reports the rule = %v, want %v; findings %v", r.ID, ex.name, strings.Join(args[1:len(args)-1], " "), found, ex.want, rep.Findings)
			}
		}
	}
}
