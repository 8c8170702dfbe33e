package main

import (
	"bytes"
	"encoding/json"
	"github.com/kilnhq/kiln/cmd/kiln/internal/buildinfo"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
)

// exitOK is a run that passed (docs/design.md §4).
const exitOK = 0

// runKiln runs the CLI in-process and returns exit code, stdout and stderr.
func runKiln(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// noConfig returns an empty config file: kiln's own fixtures are judged
// with kiln's defaults, not with the repository's .kiln.yaml above them
// (which leaves testdata out of `kiln lint .`).
func noConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".kiln.yaml")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, namespace: shop}\ndata: {a: b}\n"

func TestLintBadInput(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"good.yaml":      goodConfigMap,
		"invalid.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n",
		"scalar.yaml":    "just a string\n",
		"nokind.yaml":    "apiVersion: v1\nmetadata: {name: x}\n",
		"noversion.yaml": "kind: ConfigMap\nmetadata: {name: x}\n",
		"empty/README":   "no manifests here",
		"dupkey.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata:\n  a: 1\n  a: 2\n",
		"tabbed.yml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: t\n",
		"binary.json":    "{\"apiVersion\": \"v1\", \"kind\": \x00\x01\xff\xfe", // a manifest with binary junk; junk alone is not Kubernetes (TestBadInputCorpus)
		"nested/x.json":  `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`,
	})
	if err := os.Symlink(filepath.Join(dir, "gone.yaml"), filepath.Join(dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		wants []string // substrings of stderr
	}{
		{"invalid YAML", []string{"invalid.yaml"}, []string{"invalid.yaml:4:1: invalid YAML"}},
		{"kind without apiVersion", []string{"noversion.yaml"}, []string{"noversion.yaml:1:1: object has no apiVersion"}},
		{"missing kind", []string{"nokind.yaml"}, []string{"nokind.yaml:1:1: object has no kind"}},
		{"unreadable file", []string{"dangling.yaml"}, []string{"dangling.yaml: cannot read: no such file or directory"}},
		{"directory with no manifests", []string{"empty"}, []string{"empty: directory holds no *.yaml"}},
		{"tab indentation", []string{"tabbed.yml"}, []string{"tabbed.yml:4:1: invalid YAML", "tabs cannot indent"}},
		{"binary junk in a manifest", []string{"binary.json"}, []string{"binary.json:1:30: file holds a NUL byte"}},
		{"all at once, good files still linted", []string{"good.yaml", "invalid.yaml", "scalar.yaml", "noversion.yaml", "empty", "dangling.yaml"},
			[]string{"invalid.yaml:4:1", "noversion.yaml:1:1", "empty: directory", "dangling.yaml: cannot read"}},
	}
	chdir(t, dir)
	for _, tt := range tests {
		for _, format := range []string{"text", "json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				code, stdout, stderr := runKiln(t, "", append([]string{"lint", "-f", format}, tt.args...)...)
				if code != exitInput {
					t.Errorf("exit code %d, want %d; stderr: %s", code, exitInput, stderr)
				}
				for _, w := range tt.wants {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr %q lacks %q", stderr, w)
					}
				}
				if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
					t.Errorf("panic: %s", stderr)
				}
				if format == "json" {
					var rep struct {
						Version  int               `json:"version"`
						Findings []json.RawMessage `json:"findings"`
						Summary  map[string]int    `json:"summary"`
					}
					if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Version != 1 || rep.Findings == nil {
						t.Errorf("stdout is not a valid JSON report (%v): %q", err, stdout)
					}
				}
			})
		}
	}
}

// TestLintDuplicateKeyIsAWarning: kubectl keeps the last value of a
// repeated key; kiln judges that value and warns at the second key.
func TestLintDuplicateKeyIsAWarning(t *testing.T) {
	dir := writeFiles(t, map[string]string{"dupkey.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata:\n  a: \"1\"\n  a: \"2\"\n"})
	chdir(t, dir)
	code, stdout, stderr := runKiln(t, "", "lint", "--no-color", "dupkey.yaml")
	if code != exitOK || !strings.Contains(stdout, "dupkey.yaml:6:3") || !strings.Contains(stdout, "yaml/duplicate-key") {
		t.Errorf("code %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestLintStdinAndDirectory(t *testing.T) {
	code, stdout, stderr := runKiln(t, goodConfigMap, "lint", "--no-color", "-")
	if code != exitOK || !strings.Contains(stdout, "1 file, 1 object: 0 errors") {
		t.Errorf("stdin: code %d stdout %q stderr %q", code, stdout, stderr)
	}
	dir := writeFiles(t, map[string]string{"a/b.yaml": goodConfigMap, "a/c.yml": goodConfigMap, "a/vendor/x.yaml": "broken: [\n"})
	chdir(t, dir)
	code, stdout, _ = runKiln(t, "", "lint", "a", "--config", writeConfig(t, "exclude: [a/vendor]\n"))
	if code != exitOK || !strings.Contains(stdout, "2 files, 2 objects:") {
		t.Errorf("dir with exclude: code %d stdout %q", code, stdout)
	}
}

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kiln.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLintUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"lint", "--format", "xml", "-"}, `--format "xml"`},
		{[]string{"lint", "--kube-version", "banana", "-"}, "--kube-version"},
		{[]string{"lint", "--kube-version", "1.12", "-"}, "outside the range"},
		{[]string{"lint", "--psa-level", "strict", "-"}, `--psa-level: "strict"`},
		{[]string{"lint", "--authorizer", "maybe", "-"}, `--authorizer: "maybe": use allow or deny`},
		{[]string{"lint", "--config", "/nonexistent/kiln.yaml", "-"}, "cannot read config"},
		{[]string{"lint", "--bogus"}, "unknown flag"},
		{[]string{"explain", "no/such-rule"}, `unknown rule "no/such-rule"`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runKiln(t, goodConfigMap, tt.args...)
		if code != exitInput || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: code %d stderr %q, want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
		if stdout != "" {
			t.Errorf("%v: stdout %q, want nothing", tt.args, stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runKiln(t, "", "version")
	// A test binary has no linker values and Go stamps no module version:
	// the version is the tree's version file.
	if code != 0 || !strings.Contains(stdout, "kiln "+strings.TrimSpace(buildinfo.File)+" ") || !strings.Contains(stdout, "Kubernetes 1.16 to 1.37") {
		t.Errorf("version: %d %q", code, stdout)
	}
}

// chdir changes the working directory for the rest of the test.
func chdir(t *testing.T, dir string) {
	t.Helper()
	t.Chdir(dir)
}

// TestBenchPolicies keeps the ten policies of `make bench` run (c) loading
// cleanly (no finding on the policies or bindings themselves) and judging:
// the examples break some of them.
func TestBenchPolicies(t *testing.T) {
	code, out, stderr := runKiln(t, "", "lint", "--policy", "../../bench/policies", "-f", "json", "../../examples/web/out", "../../examples/pytorch/out")
	if code == 2 {
		t.Fatalf("exit 2: %s", stderr)
	}
	var rep struct {
		Findings []struct {
			File, Rule, Message string
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	policies := map[string]bool{}
	for _, f := range rep.Findings {
		if strings.Contains(f.File, "bench/policies") {
			t.Errorf("finding on the bench policies: %s %s", f.Rule, f.Message)
		}
		if strings.HasPrefix(f.Rule, "policy/") {
			policies[f.Rule] = true
		}
	}
	if len(policies) == 0 {
		t.Error("no bench policy judged the examples")
	}
}

// TestLintRepositoryAsItIs lints a repository with a Helm chart (and its
// file:// dependency), a kustomize overlay over a base, a kustomization with
// a remote base, and stray YAML: no input error, findings at their sources.
func TestLintRepositoryAsItIs(t *testing.T) {
	repo := "../../discover/testdata/repo"
	code, stdout, stderr := runKiln(t, "", "lint", "--config", noConfig(t), "-f", "json", repo+"/kust", repo+"/charts/app", repo+"/misc")
	if code != exitFindings {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	if !strings.Contains(stderr, "remote base github.com/acme/deploy//base?ref=v1.0.0 is not fetched") {
		t.Errorf("no warning about the remote base; stderr:\n%s", stderr)
	}
	var rep struct {
		Findings []struct{ Rule, File string }
		Errors   []any
		Summary  struct{ Objects, Skipped, Charts, Kustomizations, InputErrors int }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Summary; s.Charts != 1 || s.Kustomizations != 1 || s.Skipped != 5 || s.InputErrors != 0 || len(rep.Errors) != 0 || s.Objects != 5 {
		t.Errorf("summary = %+v, want 1 chart, 1 kustomization, 5 skipped (the remote kustomization and the file it reads, two non-objects, a patch no build reads), 5 objects, no input error", s)
	}
	files := map[string]bool{}
	for _, f := range rep.Findings {
		files[filepath.ToSlash(f.File)] = true
	}
	for _, want := range []string{repo + "/kust/base/deployment.yaml", repo + "/charts/app/templates/deployment.yaml", repo + "/misc/pod.yaml"} {
		if !files[want] {
			t.Errorf("no finding in %s; findings in %v", want, files)
		}
	}
	for f := range files {
		if strings.Contains(f, "patch") || strings.Contains(f, "kustomization") {
			t.Errorf("finding in %s, which is an input of a kustomization", f)
		}
	}
}
