package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestActionDiff runs the action's diff step on a pull request's change
// with a fake gh: the whole diff goes to the job summary, one marked
// comment is created, a later run updates it (and says "no difference"
// once the change deploys nothing new), and without a token no comment is
// touched. The lint step does not run in diff mode.
func TestActionDiff(t *testing.T) {
	git := requireTool(t, "git")
	dir := writeTree(t, map[string]string{"deploy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: shop}\ndata: {mode: old}\n"})
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
	must := func(args ...string) {
		if r := runIn(t, dir, gitEnv, git, args...); r.code != 0 {
			t.Fatalf("git %v: %s", args, r.stderr)
		}
	}
	must("init", "-q", "-b", "main")
	must("add", "-A")
	must("commit", "-q", "-m", "base")
	base := strings.TrimSpace(runIn(t, dir, gitEnv, git, "rev-parse", "HEAD").stdout)
	writeFiles(t, dir, map[string]string{"deploy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: shop}\ndata: {mode: new}\n"})

	// gh: records its arguments; the comments list prints $FAKE_GH_ID.
	fake := t.TempDir()
	log := filepath.Join(fake, "gh.log")
	os.WriteFile(filepath.Join(fake, "gh"), []byte("#!/usr/bin/env bash\necho \"$*\" >> \"$FAKE_GH_LOG\"\n"+
		"case \"$*\" in *--paginate*) [ -n \"${FAKE_GH_ID:-}\" ] && echo \"$FAKE_GH_ID\" ;; esac\nexit 0\n"), 0o755)
	run := func(inputs map[string]string, existing string) (*actionJob, result) {
		t.Helper()
		os.Remove(log)
		j := newActionJob(t, dir, "v0.1.0", inputs)
		j.outputs["install"] = map[string]string{"kiln": kilnBin, "mode": "release"}
		j.github["event.pull_request.base.sha"] = base
		j.github["event.pull_request.number"] = "7"
		j.github["repository"] = "acme/deploy"
		j.env = append(withPath(j.env, fake), "FAKE_GH_LOG="+log, "FAKE_GH_ID="+existing)
		if _, ran := j.runStep("lint"); ran {
			t.Errorf("the lint step ran in diff mode")
		}
		r, _ := j.runStep("diff")
		return j, r
	}
	calls := func() string { b, _ := os.ReadFile(log); return string(b) }

	j, r := run(map[string]string{"mode": "diff", "github-token": "t", "cache": "false"}, "")
	if r.code != 0 || j.outputs["diff"]["changed"] != "true" {
		t.Fatalf("exit %d, changed %q; want 0 and true\n%s%s", r.code, j.outputs["diff"]["changed"], r.stdout, r.stderr)
	}
	if s := readFile(t, j.summary); !strings.Contains(s, "### kiln diff: ") || !strings.Contains(s, "data.mode") {
		t.Errorf("the job summary lacks the diff:\n%s", s)
	}
	body := readFile(t, filepath.Join(j.temp, "kiln-diff-comment.md"))
	if !strings.HasPrefix(body, "<!-- kiln diff -->\n### kiln diff: ") || !strings.Contains(body, "+         new") {
		t.Errorf("the comment:\n%s", body)
	}
	if c := calls(); !strings.Contains(c, "api --paginate repos/acme/deploy/issues/7/comments") || !strings.Contains(c, "api --method POST repos/acme/deploy/issues/7/comments -F body=@") {
		t.Errorf("no comment created: gh %s", c)
	}

	_, r = run(map[string]string{"mode": "diff", "github-token": "t", "cache": "false"}, "42")
	if c := calls(); r.code != 0 || !strings.Contains(c, "api --method PATCH repos/acme/deploy/issues/comments/42 ") || strings.Contains(c, "POST") {
		t.Errorf("the comment is not updated: exit %d, gh %s", r.code, c)
	}

	_, r = run(map[string]string{"mode": "diff", "cache": "false"}, "42")
	if c := calls(); r.code != 0 || c != "" {
		t.Errorf("without a token: exit %d, gh %q", r.code, c)
	}

	must("commit", "-q", "-am", "change")
	j, r = run(map[string]string{"mode": "diff", "github-token": "t", "cache": "false", "diff-base": "HEAD"}, "42")
	if r.code != 0 || j.outputs["diff"]["changed"] != "false" || !strings.Contains(readFile(t, filepath.Join(j.temp, "kiln-diff-comment.md")), "no difference") ||
		!strings.Contains(calls(), "PATCH") {
		t.Errorf("no difference: exit %d, changed %q, gh %s", r.code, j.outputs["diff"]["changed"], calls())
	}
}
