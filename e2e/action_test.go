package e2e

import (
	"bytes"
	"encoding/xml"
	"github.com/kilnhq/kiln/internal/sarifschema"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// action is the part of action.yml the tests check.
type action struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	Uses  string            `yaml:"uses"`
	With  map[string]string `yaml:"with"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Env   map[string]string `yaml:"env"`
}

func loadAction(t *testing.T) action {
	t.Helper()
	var a action
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(repoRoot, "action.yml"))), &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

func (a action) step(t *testing.T, id string) actionStep {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("action.yml has no step with id %q", id)
	return actionStep{}
}

func TestActionDefinition(t *testing.T) {
	a := loadAction(t)
	if a.Name == "" || a.Runs.Using != "composite" {
		t.Fatalf("action.yml: name %q, runs.using %q; want a named composite action", a.Name, a.Runs.Using)
	}
	for _, in := range []string{"paths", "format", "kube-version", "policy", "fail-on", "sarif-file"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("input %q missing", in)
		} else if a.Inputs[in].Description == "" {
			t.Errorf("input %q has no description", in)
		}
	}
	if d := a.Inputs["fail-on"].Default; d == nil || *d != "error" {
		t.Errorf("fail-on must default to error")
	}
	if d := a.Inputs["format"].Default; d == nil || *d != "github" {
		t.Errorf("format must default to github (annotations on the run)")
	}
	// Installs kiln from the action's own source.
	var setupGo bool
	for _, s := range a.Runs.Steps {
		if strings.HasPrefix(s.Uses, "actions/setup-go@") && strings.Contains(s.With["go-version-file"], "github.action_path") {
			setupGo = true
		}
	}
	if !setupGo {
		t.Errorf("no actions/setup-go step reading the action's go.mod")
	}
	build := a.step(t, "build")
	if !strings.Contains(build.Run, "go build") || !strings.Contains(build.Run, "./cmd/kiln") {
		t.Errorf("build step does not go build ./cmd/kiln:\n%s", build.Run)
	}
	lint := a.step(t, "lint")
	if lint.Shell != "bash" || strings.Contains(lint.Run, "${{") {
		t.Errorf("the lint script must be bash and take inputs from env, never spliced in")
	}
	// Every input reaches the script.
	used := map[string]bool{}
	for _, v := range lint.Env {
		if m := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`).FindStringSubmatch(v); m != nil {
			used[m[1]] = true
		}
	}
	for in := range a.Inputs {
		if in != "working-directory" && !used[in] {
			t.Errorf("input %q is not passed to the lint step", in)
		}
	}
	if !strings.Contains(a.Outputs["sarif-file"].Value, "steps.lint.outputs.sarif-file") {
		t.Errorf("output sarif-file must come from the lint step")
	}
}

// runActionLint runs the action's lint step script with bash as the runner
// would: its env with the inputs resolved (defaults unless given), in dir.
func runActionLint(t *testing.T, dir string, inputs map[string]string) (result, map[string]string) {
	t.Helper()
	requireTool(t, "bash")
	a := loadAction(t)
	lint := a.step(t, "lint")
	outFile := filepath.Join(t.TempDir(), "github_output")
	env := withPath(os.Environ(), binDir)
	env = append(env, "GITHUB_OUTPUT="+outFile)
	inputRE := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`)
	for k, v := range lint.Env {
		switch {
		case v == "${{ steps.build.outputs.kiln }}":
			v = kilnBin
		case inputRE.MatchString(v):
			name := inputRE.FindStringSubmatch(v)[1]
			in, ok := a.Inputs[name]
			if !ok {
				t.Fatalf("step env %s names unknown input %q", k, name)
			}
			v = ""
			if in.Default != nil {
				v = *in.Default
			}
			if given, ok := inputs[name]; ok {
				v = given
			}
		default:
			t.Fatalf("step env %s=%q: unexpected expression", k, v)
		}
		env = append(env, k+"="+v)
	}
	script := filepath.Join(t.TempDir(), "lint.sh")
	if err := os.WriteFile(script, []byte(lint.Run), 0o644); err != nil {
		t.Fatal(err)
	}
	// GitHub runs `bash --noprofile --norc -eo pipefail {0}` for shell: bash.
	r := runIn(t, dir, env, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	outputs := map[string]string{}
	if b, err := os.ReadFile(outFile); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				outputs[k] = v
			}
		}
	}
	return r, outputs
}

func compileSARIFSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := sarifschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func TestActionLint(t *testing.T) {
	sch := compileSARIFSchema(t)
	tests := []struct {
		name    string
		files   map[string]string
		inputs  map[string]string
		code    int
		stdout  []string
		results int // SARIF results, -1: no SARIF
	}{
		{name: "errors fail the step with annotations", code: 1,
			files:  map[string]string{"deploy/rogue.yaml": badDeployment, "deploy/worker.yaml": goodDeployment, "specs/app.yaml": appSpec},
			inputs: map[string]string{"paths": "deploy/\nspecs/", "kube-version": "1.31"},
			stdout: []string{"::error file=deploy/rogue.yaml,line=", "psa/privileged"}, results: 1},
		{name: "fail-on never", code: 0,
			files:  map[string]string{"deploy/rogue.yaml": badDeployment},
			inputs: map[string]string{"paths": "deploy", "fail-on": "never"}, stdout: []string{"::error "}, results: 1},
		{name: "warnings pass by default", code: 0,
			files: map[string]string{"lab/pod.yaml": warnedPod}, inputs: map[string]string{"paths": "lab"},
			stdout: []string{"::warning file=lab/pod.yaml"}, results: 1},
		{name: "warnings fail with fail-on warning", code: 1,
			files: map[string]string{"lab/pod.yaml": warnedPod}, inputs: map[string]string{"paths": "lab", "fail-on": "warning"}, results: 1},
		{name: "clean", code: 0,
			files: map[string]string{"deploy/worker.yaml": goodDeployment, "specs/app.yaml": appSpec}, inputs: map[string]string{"paths": "deploy specs"}},
		{name: "text format, no SARIF", code: 1,
			files:  map[string]string{"deploy/rogue.yaml": badDeployment},
			inputs: map[string]string{"paths": "deploy", "format": "text", "sarif-file": ""}, stdout: []string{"psa/privileged"}, results: -1},
		{name: "psa-level input reaches kiln", code: 0,
			files: map[string]string{"deploy/rogue.yaml": strings.Replace(badDeployment, "privileged: true", "runAsUser: 0", 1),
				"policies/none.yaml": "# no policies yet\n"},
			inputs: map[string]string{"paths": "deploy", "psa-level": "privileged", "policy": "policies/none.yaml"}},
		{name: "policy input reaches kiln", code: 2,
			files: map[string]string{"deploy/worker.yaml": goodDeployment}, inputs: map[string]string{"paths": "deploy", "policy": "no-such-policies/"}, results: -1},
		{name: "bad input exits 2", code: 2,
			files: map[string]string{"deploy/broken.yaml": "kind: [\n"}, inputs: map[string]string{"paths": "deploy"}, results: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			r, outputs := runActionLint(t, dir, tt.inputs)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			if tt.results < 0 {
				if outputs["sarif-file"] != "" {
					t.Errorf("sarif-file output %q, want empty", outputs["sarif-file"])
				}
				return
			}
			sarifPath := outputs["sarif-file"]
			if sarifPath != "kiln.sarif" {
				t.Fatalf("sarif-file output %q, want kiln.sarif (outputs %v)", sarifPath, outputs)
			}
			b, err := os.ReadFile(filepath.Join(dir, sarifPath))
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("SARIF is not JSON: %v\n%s", err, b)
			}
			if err := sch.Validate(v); err != nil {
				t.Fatalf("SARIF fails the 2.1.0 schema: %v", err)
			}
			results := 0
			for _, run := range v.(map[string]any)["runs"].([]any) {
				rs, _ := run.(map[string]any)["results"].([]any)
				results += len(rs)
			}
			if (results == 0) != (tt.results == 0) {
				t.Errorf("SARIF has %d results, want %d", results, tt.results)
			}
		})
	}
}

// TestExampleWorkflow checks examples/github/kiln.yml uses the action with
// inputs it declares and uploads the SARIF it writes.
func TestExampleWorkflow(t *testing.T) {
	a := loadAction(t)
	var wf struct {
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []actionStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(repoRoot, "examples/github/kiln.yml"))), &wf); err != nil {
		t.Fatalf("examples/github/kiln.yml: %v", err)
	}
	if wf.Permissions["security-events"] != "write" {
		t.Errorf("uploading SARIF needs permissions.security-events: write")
	}
	var kiln, upload *actionStep
	for _, job := range wf.Jobs {
		for i := range job.Steps {
			s := &job.Steps[i]
			switch {
			case strings.HasPrefix(s.Uses, "kilnhq/kiln@"):
				kiln = s
			case strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@"):
				upload = s
			}
		}
	}
	if kiln == nil || upload == nil {
		t.Fatalf("the workflow must use kilnhq/kiln and github/codeql-action/upload-sarif")
	}
	var keys []string
	for k := range kiln.With {
		keys = append(keys, k)
		if _, ok := a.Inputs[k]; !ok {
			t.Errorf("the workflow sets input %q that action.yml does not declare", k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		t.Errorf("the workflow sets no inputs")
	}
	if kiln.ID == "" || upload.With["sarif_file"] != "${{ steps."+kiln.ID+".outputs.sarif-file }}" {
		t.Errorf("upload-sarif must read steps.%s.outputs.sarif-file, reads %q", kiln.ID, upload.With["sarif_file"])
	}
}

// TestGitLabSnippet runs the kiln line of examples/gitlab/.gitlab-ci.yml and
// checks the JUnit report it names is valid JUnit XML.
func TestGitLabSnippet(t *testing.T) {
	requireTool(t, "bash")
	var ci map[string]struct {
		Script    []string `yaml:"script"`
		Artifacts struct {
			When    string            `yaml:"when"`
			Reports map[string]string `yaml:"reports"`
		} `yaml:"artifacts"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(repoRoot, "examples/gitlab/.gitlab-ci.yml"))), &ci); err != nil {
		t.Fatalf("examples/gitlab/.gitlab-ci.yml: %v", err)
	}
	job, ok := ci["kiln-lint"]
	if !ok {
		t.Fatal("no kiln-lint job")
	}
	report := job.Artifacts.Reports["junit"]
	if report == "" || job.Artifacts.When != "always" {
		t.Fatalf("artifacts must always keep reports.junit; got %+v", job.Artifacts)
	}
	var line string
	for _, l := range job.Script {
		if strings.HasPrefix(l, "kiln lint") {
			line = l
		}
	}
	if !strings.Contains(line, "--format junit") || !strings.HasSuffix(line, "> "+report) {
		t.Fatalf("the kiln line must write --format junit to %s: %q", report, line)
	}
	dir := writeTree(t, map[string]string{"deploy/rogue.yaml": badDeployment, "deploy/worker.yaml": goodDeployment, "specs/app.yaml": appSpec})
	r := runIn(t, dir, nil, "bash", "-c", line)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the job fails on errors)\n%s", r.code, r.stderr)
	}
	var suites struct {
		XMLName xml.Name
		Suites  []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	b := []byte(readFile(t, filepath.Join(dir, report)))
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("%s is not XML: %v\n%s", report, err, b)
	}
	failures := 0
	for _, s := range suites.Suites {
		failures += s.Failures
	}
	if suites.XMLName.Local != "testsuites" || failures == 0 {
		t.Errorf("want <testsuites> with failures, got %s with %d failures:\n%s", suites.XMLName.Local, failures, b)
	}
}
