package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitCommit makes dir a Git repository with its files committed.
func gitCommit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestDiffExitCodes: kiln diff exits 0 and prints nothing when the sides
// are alike, 1 with the difference, 2 on an input error the change brings
// and on a bad flag or revision (docs/design.md §4).
func TestDiffExitCodes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := writeFiles(t, map[string]string{"app/cm.yaml": goodConfigMap})
	gitCommit(t, dir)
	t.Chdir(dir)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if code, out, errs := runKiln(t, "", "diff", "--base", "HEAD"); code != 0 || out != "" || errs != "" {
		t.Fatalf("a clean tree: exit %d, stdout %q, stderr %q; want 0 and nothing", code, out, errs)
	}
	os.WriteFile("app/cm.yaml", []byte(strings.Replace(goodConfigMap, "{a: b}", "{a: c}", 1)), 0o644)
	code, out, _ := runKiln(t, "", "diff", "--base", "HEAD", "--no-color")
	if code != 1 || !strings.Contains(out, "folder app — 1 changed; no new findings") || !strings.Contains(out, "data.a") {
		t.Errorf("a change: exit %d, output:\n%s", code, out)
	}
	code, out, _ = runKiln(t, "", "diff", "--base", "HEAD", "-f", "json")
	var rep struct {
		Apps []struct {
			Name    string
			Objects []struct{ Op string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 1 || err != nil || len(rep.Apps) != 1 || rep.Apps[0].Objects[0].Op != "changed" {
		t.Errorf("-f json: exit %d, %v:\n%s", code, err, out)
	}
	os.WriteFile(filepath.Join("app", "broken.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n"), 0o644)
	if code, _, errs := runKiln(t, "", "diff", "--base", "HEAD"); code != 2 || !strings.Contains(errs, "broken.yaml") {
		t.Errorf("an input error the change brings: exit %d, stderr %q; want 2 naming the file", code, errs)
	}
	for _, args := range [][]string{{"diff", "--base", "no-such-rev"}, {"diff", "-f", "sarif"}, {"diff", "--context", "-1"}} {
		if code, _, _ := runKiln(t, "", args...); code != 2 {
			t.Errorf("kiln %v: exit %d, want 2", args, code)
		}
	}
}
