package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputCorpus lints every file of testdata/bad (plus a 50 MB file and
// a symlink loop made here) together with one good file: each bad file must
// be reported with file:line (exit 2) or as a finding, never a panic, and
// the good file must still be linted.
func TestBadInputCorpus(t *testing.T) {
	corpus, err := filepath.Abs("../../testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"alias-bomb.yaml":         "alias-bomb.yaml:4:26: aliases expand to more than",
		"deep-nesting.yaml":       "deep-nesting.yaml:4:1007: document is nested more than 1000 levels",
		"invalid-utf8.yaml":       "invalid-utf8.yaml:4:12: file is not valid UTF-8",
		"invalid-yaml.yaml":       "invalid-yaml.yaml:4:1: invalid YAML",
		"missing-apiversion.yaml": "missing-apiversion.yaml:1:1: object has no apiVersion",
		"missing-kind.yaml":       "missing-kind.yaml:1:1: object has no kind",
		"tabs.yaml":               "tabs.yaml:4:1: invalid YAML: found character that cannot start any token (tabs",
		"huge.yaml":               "huge.yaml:1:1: file is larger than 32 MiB",
		"loop.yaml":               "loop.yaml: cannot read: too many levels of symbolic links",
		// Binary content under a manifest's name (a corrupt file) must not
		// pass a gate; a git-crypt'd file is skipped (manifest's tests).
		"binary-junk.yaml": "binary-junk.yaml:1:1: binary data, not YAML or JSON text",
	}
	// Files judged by rules rather than the reader: they must lint, not fail
	// to read, and give these findings (rule → message part).
	// A duplicate key is read as kubectl reads it (the last value wins) and warned about.
	linted := map[string]bool{"unknown-kind.yaml": true, "wrong-types.yaml": true, "runaway-policy.yaml": true, "duplicate-keys.yaml": true}
	// Files that are not Kubernetes objects (neither apiVersion nor kind):
	// skipped and counted, neither an error nor a finding.
	skipped := map[string]bool{"scalar.yaml": true, "sequence.json": true}
	wantFindings := map[string]string{
		"psa/decode":         "the API server would reject this pod template",
		"policy/runaway":     "actual cost limit exceeded",
		"schema/type":        "spec.replicas must be an integer, not a string",
		"yaml/duplicate-key": `duplicate key "key" (first at line 6)`,
		"schema/no-crd":      "example.com/v1 Gizmo is a custom resource",
	}

	dir := t.TempDir()
	entries, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok && !linted[e.Name()] && !skipped[e.Name()] {
			t.Errorf("testdata/bad/%s has no expectation in this test", e.Name())
		}
		if err := os.Symlink(filepath.Join(corpus, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	huge, err := os.Create(filepath.Join(dir, "huge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := huge.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	huge.Close()
	if err := os.Symlink("loop.yaml", filepath.Join(dir, "loop.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(dir, "dirloop")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zz-good.yaml"), []byte(goodConfigMap), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)

	code, stdout, stderr := runKiln(t, "", "lint", "-f", "json", ".")
	if code != exitInput {
		t.Errorf("exit code %d, want %d", code, exitInput)
	}
	for name, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr lacks %q", name, w)
		}
	}
	if strings.Contains(stderr, "panic") {
		t.Fatalf("panic:\n%s", stderr)
	}
	for name := range skipped {
		if strings.Contains(stderr, name) {
			t.Errorf("%s is reported, want it skipped:\n%s", name, stderr)
		}
	}
	var rep struct {
		Findings []struct{ Rule, Message, File string }
		Summary  struct{ Files, Objects, Skipped int }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not a JSON report: %v\n%s", err, stdout)
	}
	// The good file, unknown-kind.yaml, wrong-types.yaml, duplicate-keys.yaml
	// and the policy with its binding are still linted.
	if rep.Summary.Objects != 6 {
		t.Errorf("objects linted = %d, want 6 (good, unknown kind, wrong types, duplicate keys, policy, binding)\nstderr:\n%s", rep.Summary.Objects, stderr)
	}
	if rep.Summary.Skipped != len(skipped) {
		t.Errorf("skipped = %d, want %d", rep.Summary.Skipped, len(skipped))
	}
	for rule, msg := range wantFindings {
		found := false
		for _, f := range rep.Findings {
			found = found || (f.Rule == rule && strings.Contains(f.Message, msg))
		}
		if !found {
			t.Errorf("no %s finding containing %q in %+v", rule, msg, rep.Findings)
		}
	}
}
