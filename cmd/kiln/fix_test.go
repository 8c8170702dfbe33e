package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/atomicfile"
	"github.com/kilnhq/kiln/internal/golden"
)

// fixCorpus copies kiln fix's hand-written corpus (without the file that
// does not parse, unless withBroken) into a temporary directory and makes it
// the working directory.
func fixCorpus(t *testing.T, withBroken bool) string {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(testWD(t), "../../session/fix/testdata/in")
	entries, err := os.ReadDir(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "broken.yaml" && !withBroken {
			continue
		}
		b, err := os.ReadFile(filepath.Join(in, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir
}

// snapshot reads every file of dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func TestFixDryRun(t *testing.T) {
	dir := fixCorpus(t, false)
	before := snapshot(t, dir)
	code, stdout, stderr := runKiln(t, "", "fix", "--dry-run", ".")
	if code != exitFindings {
		t.Errorf("exit %d, want %d (the PodDisruptionBudget's removed apiVersion remains)\n%s", code, exitFindings, stderr)
	}
	golden.Check(t, filepath.Join(testWD(t), "testdata/fix-dry-run.golden"), []byte(stdout))
	if !strings.Contains(stderr, "kiln fix: would fix 46 problems in 7 files") || !strings.Contains(stderr, "api/removed  policy/v1beta1 PodDisruptionBudget") {
		t.Errorf("stderr lacks the summary or the remaining finding:\n%s", stderr)
	}
	if after := snapshot(t, dir); !equalMaps(before, after) {
		t.Error("--dry-run wrote files")
	}
}

func TestFixWrites(t *testing.T) {
	dir := fixCorpus(t, false)
	if err := os.Chmod(filepath.Join(dir, "jobs.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKiln(t, "", "fix", ".")
	if code != exitFindings {
		t.Errorf("exit %d, want %d\n%s%s", code, exitFindings, stdout, stderr)
	}
	after := snapshot(t, dir)
	wantDir := filepath.Join(testWD(t), "../../session/fix/testdata/out")
	for name, got := range after {
		want, err := os.ReadFile(filepath.Join(wantDir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != string(want) {
			t.Errorf("%s differs from session/fix/testdata/out/%s", name, name)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "jobs.yaml")); fi.Mode().Perm() != 0o600 {
		t.Errorf("jobs.yaml mode %v, want 0600 kept", fi.Mode().Perm())
	}
	// Nothing fixable is left: a second run changes nothing.
	if _, stdout, _ := runKiln(t, "", "fix", "."); !strings.Contains(stdout, "kiln fix: fixed 0 problems in 0 files") {
		t.Errorf("second run fixed more:\n%s", stdout)
	}
}

var origWD string

func testWD(t *testing.T) string {
	t.Helper()
	if origWD == "" {
		t.Fatal("working directory not recorded")
	}
	return origWD
}

func init() { origWD, _ = os.Getwd() }

// TestFixFailedWrite: when the rename of the temporary file fails, every
// file keeps its content, no temporary file is left, and kiln exits 2.
func TestFixFailedWrite(t *testing.T) {
	dir := fixCorpus(t, false)
	before := snapshot(t, dir)
	restore := atomicfile.FailRenameForTest(errors.New("injected rename failure"))
	defer restore()
	code, _, stderr := runKiln(t, "", "fix", ".")
	if code != exitInput {
		t.Errorf("exit %d, want %d", code, exitInput)
	}
	if !strings.Contains(stderr, "injected rename failure (file left unchanged)") {
		t.Errorf("stderr does not report the failed write:\n%s", stderr)
	}
	if after := snapshot(t, dir); !equalMaps(before, after) {
		t.Errorf("files changed or temporary files left: %d files before, %d after", len(before), len(after))
	}
}

func TestFixParseErrorLeavesFile(t *testing.T) {
	dir := fixCorpus(t, true)
	before := snapshot(t, dir)["broken.yaml"]
	code, _, stderr := runKiln(t, "", "fix", ".")
	if code != exitInput {
		t.Errorf("exit %d, want %d", code, exitInput)
	}
	if !strings.Contains(stderr, "broken.yaml:7:1: invalid YAML") {
		t.Errorf("stderr does not name the parse error:\n%s", stderr)
	}
	if after := snapshot(t, dir)["broken.yaml"]; after != before {
		t.Error("a file with a parse error was rewritten")
	}
}

func TestFixRuleFlag(t *testing.T) {
	for _, tc := range []struct {
		rule string
		line string // every changed line of the diff contains this
	}{
		{"api/removed", "apiVersion"},
		{"psa/runAsNonRoot", "runAsNonRoot"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			fixCorpus(t, false)
			_, stdout, _ := runKiln(t, "", "fix", "--dry-run", "--rule", tc.rule, ".")
			// Lines removed and added unchanged (a last line that gains its
			// newline) and a flow document's old line are not changes of their own.
			lines := strings.Split(stdout, "\n")
			removed := map[string]bool{}
			for _, l := range lines {
				if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
					removed[l[1:]] = true
				}
			}
			n := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") || !(strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) {
					continue
				}
				if (l[0] == '+' && removed[l[1:]]) || strings.HasPrefix(l, "-{") || (l[0] == '-' && strings.Contains(stdout, "+"+l[1:])) {
					continue
				}
				n++
				if !strings.Contains(l, tc.line) && strings.TrimSpace(l[1:]) != "securityContext:" {
					t.Errorf("--rule %s changed an unrelated line: %q", tc.rule, l)
				}
			}
			if n == 0 {
				t.Errorf("--rule %s changed nothing", tc.rule)
			}
		})
	}
}

func TestFixUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"fix", "-"},
		{"fix", "--rule", "psa/privileged", "."},
		{"fix", "--format", "yaml", "."},
	} {
		fixCorpus(t, false)
		if code, _, stderr := runKiln(t, "", args...); code != exitInput || stderr == "" {
			t.Errorf("%v: exit %d (%q), want %d with a message", args, code, stderr, exitInput)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestFixLeavesJSON(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const pod = `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "x"}, "spec": {"containers": [{"name": "a", "image": "ghcr.io/acme/a:1"}]}}` + "\n"
	if err := os.WriteFile("pod.json", []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runKiln(t, "", "fix", ".")
	if code != exitFindings || !strings.Contains(stdout, "pod.json: kiln fix does not rewrite JSON files") {
		t.Errorf("exit %d, stdout:\n%s", code, stdout)
	}
	if b, _ := os.ReadFile("pod.json"); string(b) != pod {
		t.Error("JSON file rewritten")
	}
}

func TestFixJSONReport(t *testing.T) {
	fixCorpus(t, false)
	code, stdout, stderr := runKiln(t, "", "fix", "-f", "json", ".")
	if code != exitFindings {
		t.Errorf("exit %d", code)
	}
	var rep struct {
		Findings []struct{ Rule, Severity string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout)
	}
	var left []string // but the workload family's warnings, which kiln fix does not repair
	for _, f := range rep.Findings {
		if !strings.HasPrefix(f.Rule, "workload/") || f.Severity != "warning" {
			left = append(left, f.Rule)
		}
	}
	if len(left) != 1 || left[0] != "api/removed" {
		t.Errorf("remaining findings %v (and workload/ warnings), want the one api/removed", left)
	}
	if !strings.Contains(stderr, "kiln fix: fixed 46 problems in 7 files") {
		t.Errorf("the list of fixes is not on stderr:\n%s", stderr)
	}
}
