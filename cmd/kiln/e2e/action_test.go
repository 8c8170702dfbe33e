package e2e

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/sarifschema"
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
	ID               string            `yaml:"id"`
	Name             string            `yaml:"name"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	With             map[string]string `yaml:"with"`
	Shell            string            `yaml:"shell"`
	Run              string            `yaml:"run"`
	Env              map[string]string `yaml:"env"`
	WorkingDirectory string            `yaml:"working-directory"`
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
	for _, in := range []string{"paths", "format", "kube-version", "policy", "fail-on", "sarif-file", "working-directory", "release-url", "step-summary", "baseline", "new-from-rev", "shard", "cache", "charts"} {
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
	for _, s := range a.Runs.Steps {
		// The user's Go is theirs: no setup-go, nothing written to the job's
		// environment or PATH.
		if strings.HasPrefix(s.Uses, "actions/setup-go@") {
			t.Errorf("step %q installs Go into the user's job", s.Name)
		}
		if strings.Contains(s.Run, "GITHUB_ENV") || strings.Contains(s.Run, "GITHUB_PATH") {
			t.Errorf("step %q changes the job's environment or PATH", s.Name)
		}
		if s.Run != "" && (s.Shell != "bash" || strings.Contains(s.Run, "${{")) {
			t.Errorf("step %q: scripts must be bash and take inputs from env, never spliced in", s.Name)
		}
	}
	cache := a.step(t, "cache")
	if !strings.HasPrefix(cache.Uses, "actions/cache@") {
		t.Errorf("the cache step uses %q, want actions/cache", cache.Uses)
	}
	// actions/cache resolves a relative path against the workspace: inside it.
	if p := cache.With["path"]; p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~") || strings.Contains(p, "${{") || strings.HasPrefix(p, "..") {
		t.Errorf("the cache path %q must be relative, inside the workspace", p)
	}
	// The charts: listed offline, restored with actions/cache under a key
	// made of the sources, fetched only on a miss, read by lint.
	charts := a.step(t, "charts")
	if !strings.Contains(charts.Run, "--offline-check") || !strings.Contains(charts.Run, "key=kiln-charts-") {
		t.Errorf("the charts step must list the sources offline and key the cache on them:\n%s", charts.Run)
	}
	if cc := a.step(t, "charts-cache"); !strings.HasPrefix(cc.Uses, "actions/cache@") || cc.With["path"] != ".kiln-action/charts" || !strings.Contains(cc.With["key"], "steps.charts.outputs.key") {
		t.Errorf("the charts cache step: %+v", cc)
	}
	if f := a.step(t, "fetch"); !strings.Contains(f.Run, `"$KILN" fetch`) || !strings.Contains(f.If, "cache-hit != 'true'") {
		t.Errorf("the fetch step must run kiln fetch on a cache miss: if %q\n%s", f.If, f.Run)
	}
	build := a.step(t, "build")
	if !strings.Contains(build.Run, "go build") || !strings.Contains(build.Run, "./cmd/kiln") {
		t.Errorf("build step does not go build ./cmd/kiln:\n%s", build.Run)
	}
	lint := a.step(t, "lint")
	// Every input reaches a script.
	used := map[string]bool{}
	for _, s := range a.Runs.Steps {
		for _, v := range s.Env {
			if m := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`).FindStringSubmatch(v); m != nil {
				used[m[1]] = true
			}
		}
		for _, m := range regexp.MustCompile(`\binputs\.([a-z-]+)`).FindAllStringSubmatch(s.If, -1) {
			used[m[1]] = true // mode chooses the steps
		}
	}
	used[strings.TrimSuffix(strings.TrimPrefix(lint.WorkingDirectory, "${{ inputs."), " }}")] = true
	for in := range a.Inputs {
		if !used[in] {
			t.Errorf("input %q is not passed to any step", in)
		}
	}
	if !strings.Contains(a.Outputs["sarif-file"].Value, "steps.lint.outputs.sarif-file") {
		t.Errorf("output sarif-file must come from the lint step")
	}
}

// actionJob runs the action's steps as a GitHub runner would, with bash:
// each step's env and working-directory resolved from the inputs, the
// github and runner contexts and earlier steps' outputs; `if:` evaluated;
// actions/cache emulated by a store that outlives the job.
type actionJob struct {
	t         *testing.T
	a         action
	inputs    map[string]string
	github    map[string]string // action_ref, action_path, action_repository, workspace
	workspace string
	temp      string   // RUNNER_TEMP
	env       []string // the runner's environment
	outputs   map[string]map[string]string
	cacheDir  string // the cache store: cacheDir/KEY/PATH
	ghEnv     string // the GITHUB_ENV and GITHUB_PATH files; the action must leave them empty
	ghPath    string
	summary   string   // the GITHUB_STEP_SUMMARY file
	ran       []string // ids of the steps that ran
}

func newActionJob(t *testing.T, workspace, ref string, inputs map[string]string) *actionJob {
	t.Helper()
	requireTool(t, "bash")
	tmp := t.TempDir()
	j := &actionJob{t: t, a: loadAction(t), inputs: inputs, workspace: workspace, temp: filepath.Join(tmp, "runner-temp"),
		outputs: map[string]map[string]string{}, cacheDir: filepath.Join(tmp, "cache"),
		ghEnv: filepath.Join(tmp, "github_env"), ghPath: filepath.Join(tmp, "github_path"), summary: filepath.Join(tmp, "step_summary")}
	j.github = map[string]string{"action_ref": ref, "action_path": repoRoot, "action_repository": "kilnhq/kiln", "workspace": workspace,
		"event.pull_request.base.sha": ""} // not a pull request
	for _, f := range []string{j.ghEnv, j.ghPath, j.summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(j.temp, 0o755); err != nil {
		t.Fatal(err)
	}
	j.env = append(withPath(os.Environ(), binDir), "GITHUB_WORKSPACE="+workspace, "RUNNER_TEMP="+j.temp,
		"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "GITHUB_SERVER_URL=https://github.invalid",
		"GITHUB_ENV="+j.ghEnv, "GITHUB_PATH="+j.ghPath, "GITHUB_STEP_SUMMARY="+j.summary)
	return j
}

var exprRE = regexp.MustCompile(`^\$\{\{ ([a-z_]+)\.([a-z_.-]+?)(?:\.outputs\.([a-z_-]+))? \}\}$`)

// expr resolves a value that is one ${{ … }} expression (or none).
func (j *actionJob) expr(v string) string {
	j.t.Helper()
	if !strings.Contains(v, "${{") {
		return v
	}
	m := exprRE.FindStringSubmatch(v)
	if m == nil {
		j.t.Fatalf("unexpected expression %q", v)
	}
	switch m[1] {
	case "inputs":
		in, ok := j.a.Inputs[m[2]]
		if !ok {
			j.t.Fatalf("%q names an undeclared input", v)
		}
		if given, ok := j.inputs[m[2]]; ok {
			return given
		}
		if in.Default != nil {
			return j.expr(*in.Default) // a default may be an expression (new-from-rev's)
		}
		return ""
	case "github":
		val, ok := j.github[m[2]]
		if !ok {
			j.t.Fatalf("%q: the test does not know github.%s", v, m[2])
		}
		return val
	case "runner":
		if m[2] == "temp" {
			return j.temp
		}
	case "steps":
		if m[3] != "" {
			return j.outputs[m[2]][m[3]]
		}
	}
	j.t.Fatalf("unexpected expression %q", v)
	return ""
}

// cond evaluates an `if:` of comparisons joined by &&.
func (j *actionJob) cond(c string) bool {
	j.t.Helper()
	if c == "" {
		return true
	}
	for _, part := range strings.Split(c, "&&") {
		m := regexp.MustCompile(`^\s*([a-z_.-]+) (==|!=) '([^']*)'\s*$`).FindStringSubmatch(part)
		if m == nil {
			j.t.Fatalf("unexpected if: %q", c)
		}
		got := j.expr("${{ " + m[1] + " }}")
		if (got == m[3]) != (m[2] == "==") {
			return false
		}
	}
	return true
}

// runStep runs one step (by id) if its condition holds; ok reports whether it ran.
func (j *actionJob) runStep(id string) (r result, ran bool) {
	j.t.Helper()
	s := j.a.step(j.t, id)
	if !j.cond(s.If) {
		return result{}, false
	}
	j.ran = append(j.ran, id)
	if s.Uses != "" {
		if !strings.HasPrefix(s.Uses, "actions/cache@") {
			j.t.Fatalf("step %s uses %s, which the test cannot run", id, s.Uses)
		}
		j.restoreCache(id, s)
		return result{}, true
	}
	out := filepath.Join(j.temp, "output-"+id)
	env := append(append([]string{}, j.env...), "GITHUB_OUTPUT="+out)
	for k, v := range s.Env {
		env = append(env, k+"="+j.expr(v))
	}
	dir := j.workspace
	if wd := j.expr(s.WorkingDirectory); wd != "" {
		dir = wd
		if !filepath.IsAbs(wd) {
			dir = filepath.Join(j.workspace, wd)
		}
	}
	script := filepath.Join(j.temp, id+".sh")
	if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
		j.t.Fatal(err)
	}
	// GitHub runs `bash --noprofile --norc -eo pipefail {0}` for shell: bash.
	r = runIn(j.t, dir, env, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	outputs := map[string]string{}
	if b, err := os.ReadFile(out); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				outputs[k] = v
			}
		}
	}
	j.outputs[id] = outputs
	return r, true
}

// restoreCache emulates actions/cache's restore: the store's copy of path
// under key, if any, comes back into the workspace.
func (j *actionJob) restoreCache(id string, s actionStep) {
	key, path := j.expr(s.With["key"]), s.With["path"]
	if key == "" || path == "" {
		j.t.Fatalf("cache step without key or path: %+v", s.With)
	}
	stored := filepath.Join(j.cacheDir, key, path)
	hit := "false"
	if _, err := os.Stat(stored); err == nil {
		if err := os.CopyFS(filepath.Join(j.workspace, path), os.DirFS(stored)); err != nil {
			j.t.Fatal(err)
		}
		hit = "true"
	}
	j.outputs[id] = map[string]string{"cache-hit": hit}
}

// saveCache emulates actions/cache's post step: path, when the key was a miss.
func (j *actionJob) saveCache() {
	s := j.a.step(j.t, "cache")
	if j.outputs["cache"] == nil || j.outputs["cache"]["cache-hit"] == "true" {
		return
	}
	key, path := j.expr(s.With["key"]), s.With["path"]
	if err := os.CopyFS(filepath.Join(j.cacheDir, key, path), os.DirFS(filepath.Join(j.workspace, path))); err != nil {
		j.t.Fatalf("saving the cache: %v", err)
	}
}

// runAll runs every step in order, stopping at the first failure, saves
// the cache after a successful job and checks the job's environment and
// PATH were left alone.
func (j *actionJob) runAll() (last result) {
	j.t.Helper()
	ok := true
	for _, s := range j.a.Runs.Steps {
		r, ran := j.runStep(s.ID)
		if !ran {
			continue
		}
		last = r
		if r.code != 0 {
			ok = false
			break
		}
	}
	if ok { // actions/cache saves only after a successful job
		j.saveCache()
	}
	for _, f := range []string{j.ghEnv, j.ghPath} {
		if b := readFile(j.t, f); b != "" {
			j.t.Errorf("the action wrote %q to %s", b, filepath.Base(f))
		}
	}
	return last
}

// runActionLint runs the action's lint step script in dir (the workspace)
// with the inputs (defaults unless given) and the e2e kiln as the installed one.
func runActionLint(t *testing.T, dir string, inputs map[string]string) (result, map[string]string) {
	t.Helper()
	j := newActionJob(t, dir, "v0.1.0", inputs)
	j.outputs["install"] = map[string]string{"kiln": kilnBin, "mode": "release"}
	r, _ := j.runStep("lint")
	return r, j.outputs["lint"]
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

// TestActionStepSummary: the lint step appends kiln's Markdown summary to
// the job summary (GITHUB_STEP_SUMMARY) whether the step passes or fails,
// keeps what earlier steps wrote there, leaves the step's exit code and
// annotations alone, and writes nothing with step-summary: false.
func TestActionStepSummary(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		inputs map[string]string
		code   int
		want   []string // in the summary, after what was there
	}{
		{name: "errors", code: 1,
			files:  map[string]string{"deploy/rogue.yaml": badDeployment, "deploy/worker.yaml": goodDeployment},
			inputs: map[string]string{"paths": "deploy"},
			want:   []string{"### kiln lint: 5 errors, 0 warnings, 0 infos\n", "| `psa` | 5 | 0 | 0 | 0 |\n", "| error | `psa/privileged` | `deploy/rogue.yaml:17:13` | `Deployment/shop/rogue` |"}},
		{name: "clean", code: 0,
			files: map[string]string{"deploy/worker.yaml": goodDeployment}, inputs: map[string]string{"paths": "deploy"},
			want: []string{"### kiln lint: 0 errors, 0 warnings, 0 infos\n", "\nNo findings.\n"}},
		{name: "input error", code: 2,
			files: map[string]string{"deploy/broken.yaml": "kind: [\n"}, inputs: map[string]string{"paths": "deploy"},
			want: []string{"### kiln lint: 1 input error, ", "#### Input errors\n", "| `deploy/broken.yaml:"}},
		{name: "off", code: 1,
			files:  map[string]string{"deploy/rogue.yaml": badDeployment},
			inputs: map[string]string{"paths": "deploy", "step-summary": "false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			j := newActionJob(t, dir, "v0.1.0", tt.inputs)
			j.outputs["install"] = map[string]string{"kiln": kilnBin, "mode": "release"}
			const earlier = "## an earlier step's summary\n"
			if err := os.WriteFile(j.summary, []byte(earlier), 0o644); err != nil {
				t.Fatal(err)
			}
			r, _ := j.runStep("lint")
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tt.code, r.stdout, r.stderr)
			}
			if tt.code == 1 && !strings.Contains(r.stdout, "::error file=deploy/rogue.yaml,") {
				t.Errorf("the annotations are gone:\n%s", r.stdout)
			}
			summary := readFile(t, j.summary)
			added, ok := strings.CutPrefix(summary, earlier)
			if !ok {
				t.Fatalf("the job summary lost what was there:\n%s", summary)
			}
			if len(tt.want) == 0 && added != "" {
				t.Errorf("step-summary: false wrote:\n%s", added)
			}
			for _, w := range tt.want {
				if !strings.Contains(added, w) {
					t.Errorf("the job summary lacks %q:\n%s", w, added)
				}
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

// TestActionReportsRelativeToRepositoryRoot runs the lint step with a
// working-directory below the workspace: kiln runs there (its .kiln.yaml
// applies), while SARIF URIs, annotations and the sarif-file output name
// files from the repository root, as code scanning and annotations need.
func TestActionReportsRelativeToRepositoryRoot(t *testing.T) {
	const wd = "infra/prod env" // a space: URIs percent-encode it
	ws := writeTree(t, map[string]string{
		wd + "/deploy/rogue.yaml":  badDeployment,
		wd + "/deploy/worker.yaml": goodDeployment,
		// Applies only when kiln runs in wd: lowers the error to a warning.
		wd + "/.kiln.yaml":   "rules:\n  \"psa/*\": warning\n",
		"elsewhere/x.yaml":   badDeployment, // not linted: paths are relative to wd
		"README.md":          "a repository\n",
		"infra/.kiln.yaml":   "rules: {\"*\": off}\n", // not the working directory's
		"infra/unrelated.md": "x\n",
	})
	r, outputs := runActionLint(t, ws, map[string]string{"working-directory": wd, "paths": "deploy"})
	if r.code != 0 {
		t.Fatalf("exit %d (the working directory's .kiln.yaml makes psa/* warnings)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "::warning file="+wd+"/deploy/rogue.yaml,line=") {
		t.Errorf("annotations must name files from the repository root:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "file=deploy/") {
		t.Errorf("an annotation names a file relative to the working directory:\n%s", r.stdout)
	}
	if got, want := outputs["sarif-file"], wd+"/kiln.sarif"; got != want {
		t.Fatalf("sarif-file output %q, want %q (relative to the repository root)", got, want)
	}
	b := []byte(readFile(t, filepath.Join(ws, outputs["sarif-file"])))
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("SARIF is not JSON: %v\n%s", err, b)
	}
	if err := compileSARIFSchema(t).Validate(v); err != nil {
		t.Fatalf("SARIF fails the 2.1.0 schema: %v", err)
	}
	uris := regexp.MustCompile(`"uri": "([^"]*)"`).FindAllStringSubmatch(string(b), -1)
	if len(uris) == 0 {
		t.Fatalf("no URIs in the SARIF:\n%s", b)
	}
	for _, m := range uris {
		if !strings.HasPrefix(m[1], "infra/prod%20env/deploy/") {
			t.Errorf("SARIF URI %q is not relative to the repository root", m[1])
		}
	}
	// At the root itself nothing changes.
	r, outputs = runActionLint(t, filepath.Join(ws, wd), map[string]string{"paths": "deploy"})
	if r.code != 0 || outputs["sarif-file"] != "kiln.sarif" || !strings.Contains(r.stdout, "::warning file=deploy/rogue.yaml,") {
		t.Errorf("working-directory .: exit %d, outputs %v\n%s%s", r.code, outputs, r.stdout, r.stderr)
	}
}

// fakeRelease writes a release directory as make release lays it out for
// linux/amd64 (the static kiln and SHA256SUMS) under dir/TAG.
func fakeRelease(t *testing.T, dir, tag string) (sum string) {
	t.Helper()
	b, err := os.ReadFile(staticKiln(t))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	sum = hex.EncodeToString(h[:])
	writeFiles(t, filepath.Join(dir, tag), map[string]string{
		"kiln_linux_amd64": string(b),
		// Other platforms' lines, as in a real SHA256SUMS.
		"SHA256SUMS": strings.Repeat("0", 64) + "  kiln_darwin_arm64\n" + sum + "  kiln_linux_amd64\n",
	})
	return sum
}

// TestActionReleaseDownload runs the action pinned to a release tag against
// a release served on 127.0.0.1 (and one on file://): it downloads the
// binary for the runner, verifies it against SHA256SUMS, and lints with it
// without Go on PATH. A binary that does not match its checksum fails the
// step and is not kept.
func TestActionReleaseDownload(t *testing.T) {
	requireTool(t, "curl")
	releases := t.TempDir()
	sum := fakeRelease(t, releases, "v0.1.0")
	srv := httptest.NewServer(http.FileServer(http.Dir(releases))) // listens on 127.0.0.1
	defer srv.Close()
	for _, url := range []string{srv.URL, "file://" + releases} {
		ws := writeTree(t, map[string]string{"deploy/rogue.yaml": badDeployment})
		j := newActionJob(t, ws, "v0.1.0", map[string]string{"paths": "deploy", "release-url": url})
		j.env = noGo(t, j.env)
		r := j.runAll()
		if strings.Join(j.ran, ",") != "install,judged,charts,lint" {
			t.Errorf("%s: steps run %v, want install, judged (kiln's content cache), charts (no HelmRelease: no chart cache, no fetch) and lint only (no build cache, no build)", url, j.ran)
		}
		if r.code != 1 || !strings.Contains(r.stdout, "::error file=deploy/rogue.yaml") {
			t.Errorf("%s: lint exit %d, want 1 with the finding\n%s%s", url, r.code, r.stdout, r.stderr)
		}
		if got := j.outputs["install"]["kiln"]; !strings.HasPrefix(got, j.temp) {
			t.Errorf("%s: the binary %q is not in RUNNER_TEMP", url, got)
		}
		if v := j.outputs["install"]["version"]; !strings.HasPrefix(v, "kiln ") {
			t.Errorf("%s: version output %q", url, v)
		}
	}
	// A tampered binary.
	tampered := t.TempDir()
	fakeRelease(t, tampered, "v0.1.0")
	writeFiles(t, filepath.Join(tampered, "v0.1.0"), map[string]string{"kiln_linux_amd64": "#!/bin/sh\necho pwned\n"})
	ws := t.TempDir()
	j := newActionJob(t, ws, "v0.1.0", map[string]string{"release-url": "file://" + tampered})
	r, _ := j.runStep("install")
	if r.code == 0 || !strings.Contains(r.stdout, "does not match its SHA256SUMS entry (want "+sum) {
		t.Errorf("tampered binary: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(j.temp, "kiln-action", "v0.1.0", "kiln*")); len(left) > 0 {
		t.Errorf("the unverified binary was kept: %v", left)
	}
	// A release without the runner's binary.
	j = newActionJob(t, ws, "v0.1.0", map[string]string{"release-url": srv.URL})
	j.env = append(j.env, "RUNNER_OS=macOS")
	if r, _ := j.runStep("install"); r.code == 0 {
		t.Errorf("a missing darwin binary must fail the step\n%s%s", r.stdout, r.stderr)
	}
}

// noGo is env with a PATH that holds no go command (and no kiln but e2e's).
func noGo(t *testing.T, env []string) []string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"bash", "sh", "curl", "sha256sum", "awk", "cut", "mkdir", "mv", "chmod", "rm", "head", "sed", "cat", "find", "sort", "xargs", "env", "dirname", "basename"} {
		if p, err := exec.LookPath(tool); err == nil {
			if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := []string{}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "PATH="+dir)
}

// TestActionBuildFallback runs the action pinned to a branch: the first job
// builds kiln with the runner's Go into the workspace's .kiln-action/ and
// the cache saves it; a second job in a fresh workspace restores it and
// builds nothing. The job's own Go settings (GOFLAGS, GOOS) do not reach
// the build and nothing is written to the job's environment. Without Go the
// build step fails and says to pin a release tag.
func TestActionBuildFallback(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kiln")
	}
	files := map[string]string{"deploy/worker.yaml": goodDeployment}
	ws := writeTree(t, files)
	j := newActionJob(t, ws, "main", map[string]string{"paths": "deploy"})
	// The user's settings for their own builds.
	j.env = append(j.env, "GOFLAGS=-mod=vendor", "GOOS=windows", "GOARCH=arm64")
	r := j.runAll()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Join(j.ran, ",") != "install,cache,build,judged,charts,lint" {
		t.Errorf("steps run %v, want install, cache, build, judged, charts, lint", j.ran)
	}
	if k := j.outputs["install"]["judged-key"]; !strings.HasPrefix(k, j.outputs["install"]["judged-prefix"]) || k == "" {
		t.Errorf("content cache key %q does not start with its restore prefix %q", k, j.outputs["install"]["judged-prefix"])
	}
	if entries, _ := filepath.Glob(filepath.Join(ws, ".kiln-action/judged/*/*")); len(entries) == 0 {
		t.Error("kiln lint wrote no content cache entry under .kiln-action/judged, where the judged step restores it from")
	}
	bin := j.outputs["install"]["kiln"]
	if bin != filepath.Join(ws, ".kiln-action/bin/kiln") {
		t.Errorf("the built kiln is %q, want it in the workspace's .kiln-action/bin", bin)
	}
	if f, err := elf.Open(bin); err != nil || f.Machine != elf.EM_X86_64 {
		t.Errorf("the built kiln is not a linux/amd64 binary (the job's GOOS/GOARCH leaked in?): %v", err)
	}
	key := j.outputs["install"]["cache-key"]
	if !regexp.MustCompile(`^kiln-linux-amd64-[0-9a-f]{64}$`).MatchString(key) {
		t.Errorf("cache key %q", key)
	}
	// A second job, fresh workspace, same cache store: restored, not built.
	ws2 := writeTree(t, files)
	j2 := newActionJob(t, ws2, "main", map[string]string{"paths": "deploy"})
	j2.cacheDir = j.cacheDir
	j2.env = noGo(t, j2.env) // no Go needed when the cache hits
	if r := j2.runAll(); r.code != 0 {
		t.Fatalf("second job: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Join(j2.ran, ",") != "install,cache,judged,charts,lint" || j2.outputs["install"]["cache-key"] != key {
		t.Errorf("second job ran %v with key %q; want install, cache (hit on %q), judged, charts, lint", j2.ran, j2.outputs["install"]["cache-key"], key)
	}
	// Without Go and without a cached build: a clear failure.
	j3 := newActionJob(t, writeTree(t, files), "main", nil)
	j3.env = noGo(t, j3.env)
	if r := j3.runAll(); r.code == 0 || !strings.Contains(r.stdout, "pin the action to a release tag") {
		t.Errorf("without Go: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestActionCacheKey checks the build cache key follows the action's
// sources: the same tree gives the same key, a changed Go file a new one.
func TestActionCacheKey(t *testing.T) {
	src := writeTree(t, map[string]string{"go.mod": "module x\n", "cmd/kiln/main.go": "package main\n", "README.md": "x\n"})
	key := func() string {
		j := newActionJob(t, t.TempDir(), "0123456789abcdef0123456789abcdef01234567", nil)
		j.github["action_path"] = src
		if r, _ := j.runStep("install"); r.code != 0 {
			t.Fatalf("install: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if j.outputs["install"]["mode"] != "build" {
			t.Fatalf("a commit SHA is not a release tag: mode %q", j.outputs["install"]["mode"])
		}
		return j.outputs["install"]["cache-key"]
	}
	k1, k2 := key(), key()
	writeFiles(t, src, map[string]string{"README.md": "changed, not a source\n"})
	k3 := key()
	writeFiles(t, src, map[string]string{"cmd/kiln/main.go": "package main\n\nfunc main() {}\n"})
	k4 := key()
	if k1 != k2 || k1 != k3 || k1 == k4 {
		t.Errorf("keys %s %s %s %s: want the first three equal, the last different", k1, k2, k3, k4)
	}
}

// TestActionContentCache: the lint step keeps kiln's content cache under
// .kiln-action/judged, where the judged step restores it from, unless the
// cache input is false; the findings are the same either way.
func TestActionContentCache(t *testing.T) {
	var outs []string
	for _, cache := range []string{"true", "true", "false"} {
		dir := writeTree(t, map[string]string{"deploy/rogue.yaml": badDeployment})
		r, _ := runActionLint(t, dir, map[string]string{"paths": "deploy", "cache": cache, "format": "json", "sarif-file": "", "step-summary": "false"})
		if r.code != 1 {
			t.Fatalf("cache %s: exit %d\n%s%s", cache, r.code, r.stdout, r.stderr)
		}
		entries, _ := filepath.Glob(filepath.Join(dir, ".kiln-action/judged/*/*"))
		if (len(entries) > 0) != (cache == "true") {
			t.Errorf("cache %s: %d entries under .kiln-action/judged", cache, len(entries))
		}
		outs = append(outs, r.stdout)
	}
	if outs[0] != outs[2] {
		t.Errorf("the report with the cache differs from the one without:\n%s\n---\n%s", outs[0], outs[2])
	}
}
