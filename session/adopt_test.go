package session

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/session/settings"
)

// copyDir copies the directory src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lintRun is one kiln lint in the current directory with the flags given
// (flag name → value), as the command runs it.
type lintRun struct {
	out     *Linted
	verdict error
	json    string
}

func lintWith(t *testing.T, paths []string, flags map[string]string) (*lintRun, error) {
	t.Helper()
	given := settings.New()
	keys := map[string]string{"baseline": "baseline", "write-baseline": "writeBaseline", "new-from-rev": "newFromRev", "shard": "shard",
		"cache-dir": "cacheDir", "no-cache": "noCache", "psa-level": "psa.level", "policy": "policies"}
	for _, name := range []string{"write-baseline", "baseline", "new-from-rev", "shard", "cache-dir", "no-cache", "psa-level", "policy"} {
		if v, ok := flags[name]; ok {
			value := settings.Scalar(v)
			if name == "policy" {
				value = settings.List([]string{v})
			}
			if err := given.Apply(settings.Assignment{Key: keys[name], Value: value, From: "--" + name}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, ok := flags["cache-dir"]; !ok {
		given.NoCache = true // the tests of other features judge afresh
	}
	s, err := New(given, paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Lint(paths, LintOptions{})
	if err != nil {
		return nil, err
	}
	defer out.Result.Close()
	var buf bytes.Buffer
	if err := report.Write(&buf, "json", out.Result, report.Options{Inputs: out.Inputs}); err != nil {
		t.Fatal(err)
	}
	return &lintRun{out: out, verdict: s.Verdict(out.Result, out.Inputs.Errors), json: buf.String()}, nil
}

func mustLint(t *testing.T, paths []string, flags map[string]string) *lintRun {
	t.Helper()
	r, err := lintWith(t, paths, flags)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newFindings are the findings of a run a baseline does not hold.
func (r *lintRun) newFindings() []rules.Finding {
	var out []rules.Finding
	r.out.Result.Each(func(f rules.Finding) error {
		if f.Suppressed == nil && !f.Baselined {
			out = append(out, f)
		}
		return nil
	})
	return out
}

func editFile(t *testing.T, name string, edit func(string) string) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	after := edit(string(data))
	if after == string(data) {
		t.Fatalf("the edit of %s changed nothing", name)
	}
	if err := os.WriteFile(name, []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
}

const privileged = "        name: mongo\n        securityContext: {privileged: true}\n"

// TestBaselineAdoption is the walk through, on a tree modelled on
// kubernetes/examples: write a baseline, lint with it (exit 0), move lines
// (still 0), add a violation (exit 1, one new finding), fix a baselined one
// (reported as fixed).
func TestBaselineAdoption(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, "testdata/adopt", dir)
	t.Chdir(dir)
	const file = "kiln-baseline.jsonl"

	plain := mustLint(t, nil, nil)
	if plain.verdict == nil {
		t.Fatal("the tree has no findings that fail the run: the test shows nothing")
	}
	written := mustLint(t, nil, map[string]string{"write-baseline": file})
	if written.verdict != nil || written.out.Result.Summary.Baselined != plain.out.Result.Summary.Errors+plain.out.Result.Summary.Warnings {
		t.Fatalf("--write-baseline: %v, %+v; want exit 0 and every finding baselined (%+v)", written.verdict, written.out.Result.Summary, plain.out.Result.Summary)
	}
	data, _ := os.ReadFile(file)
	if bytes.Contains(data, []byte(`"line"`)) || !bytes.Contains(data, []byte(`"count":2`)) {
		t.Errorf("the baseline holds line numbers, or not the two copies of the frontend's findings:\n%s", data)
	}
	again := mustLint(t, nil, map[string]string{"write-baseline": file})
	if data2, _ := os.ReadFile(file); !bytes.Equal(data, data2) {
		t.Errorf("--write-baseline twice: the files differ")
	}
	_ = again

	steps := []struct {
		name    string
		edit    func()
		wantNew []string // rules of the new findings
		fails   bool
		fixed   int
	}{
		{"unchanged", func() {}, nil, false, 0},
		{"lines moved", func() {
			editFile(t, "mongo/mongo-controller.yaml", func(s string) string { return "# moved\n# down\n\n" + s })
			editFile(t, "guestbook/frontend.yaml", func(s string) string {
				return strings.Replace(s, "  replicas: 3\n", "  replicas: 3\n  minReadySeconds: 5\n  revisionHistoryLimit: 3\n", 1)
			})
		}, nil, false, 0},
		{"a violation added", func() {
			editFile(t, "mongo/mongo-controller.yaml", func(s string) string {
				return strings.Replace(s, "        name: mongo\n        ports:", privileged+"        ports:", 1)
			})
		}, []string{"psa/privileged"}, true, 0},
		{"a baselined one fixed", func() {
			editFile(t, "mongo/mongo-controller.yaml", func(s string) string { return strings.Replace(s, "          hostPort: 27017\n", "", 1) })
		}, []string{"psa/privileged"}, true, 1},
		{"a third copy of the frontend: its findings are new", func() {
			editFile(t, "guestbook/all-in-one.yaml", func(s string) string {
				d := s[strings.Index(s, "apiVersion: apps/v1"):]
				return s + "---\n" + strings.Replace(d, "name: frontend", "name: frontend\n  namespace: default", 1)
			})
		}, nil, true, 1},
	}
	for _, st := range steps {
		st.edit()
		r := mustLint(t, nil, map[string]string{"baseline": file})
		var got []string
		for _, f := range r.newFindings() {
			got = append(got, f.Rule)
		}
		if st.wantNew != nil && strings.Join(got, ",") != strings.Join(st.wantNew, ",") {
			t.Errorf("%s: new findings %v, want %v", st.name, got, st.wantNew)
		}
		if st.wantNew == nil && st.fails && len(got) == 0 {
			t.Errorf("%s: no new finding", st.name)
		}
		if (r.verdict != nil) != st.fails {
			t.Errorf("%s: verdict %v, want failing %v", st.name, r.verdict, st.fails)
		}
		if r.out.Inputs.BaselineFixed != st.fixed {
			t.Errorf("%s: %d baseline entries fixed, want %d", st.name, r.out.Inputs.BaselineFixed, st.fixed)
		}
		if !strings.Contains(r.json, `"baselineState": "unchanged"`) {
			t.Errorf("%s: the JSON report marks no finding unchanged", st.name)
		}
		if (len(got) > 0) != strings.Contains(r.json, `"baselineState": "new"`) {
			t.Errorf("%s: the JSON report's new findings do not match the %d new", st.name, len(got))
		}
	}
}

func TestBaselineFileErrors(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, "testdata/adopt", dir)
	t.Chdir(dir)
	os.WriteFile("bad.jsonl", []byte("{\"kiln\":\"baseline\",\"version\":1}\n{\"rule\":\"psa/x\",\"message\":\"m\"}\n{\"rule\": \n"), 0o644)
	_, err := lintWith(t, nil, map[string]string{"baseline": "bad.jsonl"})
	var ie InputErrors
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "bad.jsonl:3:1: not a baseline entry") {
		t.Fatalf("a malformed baseline: %v, want an input error at bad.jsonl:3:1", err)
	}
	if code := ExitCode(err, io.Discard); code != ExitInput {
		t.Errorf("exit code %d, want 2", code)
	}
	_, err = lintWith(t, nil, map[string]string{"baseline": "missing.jsonl"})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "missing.jsonl: cannot read the baseline") {
		t.Errorf("a missing baseline: %v", err)
	}
	if _, err := lintWith(t, nil, map[string]string{"write-baseline": "b.jsonl", "shard": "1/2"}); err == nil {
		t.Errorf("--write-baseline with --shard: no error")
	}
}

// git runs git in dir with a fixed identity and no user configuration.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestNewFromRev lints a change against the revision before it, on a Git
// history built here: only what the change introduced is new.
func TestNewFromRev(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("TMPDIR", t.TempDir()) // to see that the revision's copy is removed
	dir := t.TempDir()
	copyDir(t, "testdata/adopt", dir)
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	t.Chdir(dir)

	// The change: lines moved, one violation added in a committed file, a
	// new file with its own findings, in the worktree (uncommitted).
	editFile(t, "mongo/mongo-controller.yaml", func(s string) string {
		return "# moved\n\n" + strings.Replace(s, "        name: mongo\n        ports:", privileged+"        ports:", 1)
	})
	os.MkdirAll("added", 0o755)
	os.WriteFile("added/pod.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  hostNetwork: true\n  containers:\n  - name: c\n    image: busybox:1.36\n"), 0o644)

	r := mustLint(t, nil, map[string]string{"new-from-rev": "HEAD"})
	byFile := map[string][]string{}
	for _, f := range r.newFindings() {
		byFile[f.Pos.File] = append(byFile[f.Pos.File], f.Rule)
	}
	if got := byFile["mongo/mongo-controller.yaml"]; strings.Join(got, ",") != "psa/privileged" {
		t.Errorf("new in the edited file: %v, want psa/privileged alone", got)
	}
	if len(byFile["added/pod.yaml"]) == 0 || len(byFile) != 2 {
		t.Errorf("new findings %v: want those of the added file and the one added violation", byFile)
	}
	if r.verdict == nil || r.out.Result.Summary.Baselined == 0 {
		t.Errorf("verdict %v, %d baselined: want failing, the revision's findings baselined", r.verdict, r.out.Result.Summary.Baselined)
	}
	// The same paths, from a subdirectory, and a path added since.
	t.Chdir("mongo")
	sub := mustLint(t, []string{"."}, map[string]string{"new-from-rev": "main"})
	if got := sub.newFindings(); len(got) != 1 || got[0].Rule != "psa/privileged" {
		t.Errorf("from mongo/: new %v, want psa/privileged alone", got)
	}
	t.Chdir("..")
	added := mustLint(t, []string{"added"}, map[string]string{"new-from-rev": "HEAD"})
	if len(added.newFindings()) != len(byFile["added/pod.yaml"]) || added.out.Result.Summary.Baselined != 0 {
		t.Errorf("a directory added since: %d new, %d baselined; want all new", len(added.newFindings()), added.out.Result.Summary.Baselined)
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("the revision's copy was left in the temp dir: %v", left)
	}
	if _, err := lintWith(t, nil, map[string]string{"new-from-rev": "no-such-rev"}); err == nil || !strings.Contains(err.Error(), "no such commit") {
		t.Errorf("an unknown revision: %v", err)
	}
}

// TestShardUnionIsWholeRun splits a generated corpus of 2000 objects, with
// files of every file-level kind added (an input error, a file that is not
// Kubernetes, copies of an object in two files, an unused ignore, custom
// resources with no CRD), into three shards: each judges part of the
// objects, and kiln report merge of their JSON is the whole run's, byte for
// byte.
func TestShardUnionIsWholeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("lints 2000 objects four times")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 (for bench/gen-corpus) is not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("python3", "../bench/gen-corpus", "2000", dir).CombinedOutput(); err != nil {
		t.Fatalf("gen-corpus: %v\n%s", err, out)
	}
	copyDir(t, "testdata/adopt", filepath.Join(dir, "adopt"))
	extra := map[string]string{
		"broken.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n",
		"notk8s.yaml":   "just: a config file\n",
		"ignored.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n  annotations:\n    kiln.dev/ignore: psa/privileged\n",
		"widgets.yaml":  "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: b\n",
		"widgets2.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: c\n",
	}
	for name, content := range extra {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	t.Chdir(dir)
	whole, err := lintWith(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	var shards []io.Reader
	objects := 0
	for i := 1; i <= n; i++ {
		s, err := lintWith(t, nil, map[string]string{"shard": settings.Shard{Index: i, Count: n}.String()})
		if err != nil {
			t.Fatal(err)
		}
		sum := s.out.Result.Summary
		if sum.Objects == 0 || sum.Objects >= whole.out.Result.Summary.Objects*2/3 {
			t.Errorf("shard %d/%d judged %d of %d objects: not a balanced part", i, n, sum.Objects, whole.out.Result.Summary.Objects)
		}
		objects += sum.Objects
		shards = append(shards, strings.NewReader(s.json))
	}
	if objects != whole.out.Result.Summary.Objects {
		t.Errorf("the shards judged %d objects, the whole run %d", objects, whole.out.Result.Summary.Objects)
	}
	res, in, err := report.Merge(shards, func(i int) string { return settings.Shard{Index: i + 1, Count: n}.String() })
	if err != nil {
		t.Fatal(err)
	}
	var merged bytes.Buffer
	report.Write(&merged, "json", res, report.Options{Inputs: in})
	if merged.String() != whole.json {
		t.Errorf("the merged shards differ from the whole run:\n%s", firstDiff(merged.String(), whole.json))
	}
	for _, want := range []string{`"file": "broken.yaml"`, `"rule": "kiln/unused-ignore"`, `"rule": "object/duplicate"`, `"rule": "schema/no-crd"`, `"skipped": 1`} {
		if !strings.Contains(whole.json, want) {
			t.Errorf("the whole run has no %s: the corpus does not test it", want)
		}
	}
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got " + la[i] + "\nwant " + lb[i]
		}
	}
	return "lengths differ: " + strconv.Itoa(len(la)) + " and " + strconv.Itoa(len(lb)) + " lines"
}
