package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kilnhq/kiln/session/settings"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// docsNotRun lists the examples of docs/ that TestDocsExamples does not
// run, each with the reason: "PAGE: COMMAND" for a command of a sh block,
// "PAGE: FIRST LINE" for a yaml block. An example neither run nor listed
// fails the test, and so does an entry no page holds any more.
var docsNotRun = map[string]string{
	"docs/adoption.md: kiln lint --new-from-rev origin/main deploy/":    "needs a Git clone with the remote branch origin/main, and names the reader's deploy/ folder",
	"docs/adoption.md: # GitHub Actions":                                "a GitHub Actions workflow, not kiln input (TestExampleWorkflow runs examples/github's)",
	"docs/adoption.md: # GitLab CI":                                     "a GitLab CI job, not kiln input (TestGitLabSnippet runs examples/gitlab's)",
	"docs/adoption.md: kiln:":                                           "a GitLab CI job, not kiln input",
	"docs/api-server.md: matchConditions:":                              "an excerpt of admit/mutate/testdata/team.yaml, which admit/mutate's tests judge whole",
	"docs/diff.md: kiln diff":                                           "needs a Git clone whose default branch has a merge base with HEAD (TestDiff* run kiln diff on made repositories)",
	"docs/diff.md: kiln diff --base origin/main apps/":                  "needs the remote branch origin/main, and names the reader's apps/ folder",
	"docs/diff.md: kiln diff --base HEAD~1 -f markdown > diff.md":       "needs a Git clone with history; writes diff.md",
	"docs/diff.md: permissions: {contents: read, pull-requests: write}": "a GitHub Actions job, not kiln input (TestActionDiff runs the action's diff mode)",
	"docs/install.md: go install ./cmd/kiln":                            "builds and installs kiln (the Go toolchain, minutes on a cold cache)",
	"docs/install.md: make build":                                       "builds kiln (the Makefile; TestMain builds the same binary)",
	"docs/install.md: make release":                                     "cross-compiles five binaries (minutes)",
	"docs/install.md: make image":                                       "needs podman",
	"docs/install.md: curl -fsSLO https://github.com/kilnhq/kiln/releases/download/v0.1.0/kiln_linux_amd64": "needs the network and public hosting (the page marks it so)",
	"docs/install.md: go install github.com/kilnhq/kiln/cmd/kiln@v0.1.0":                                    "needs the network and public hosting (the page marks it so)",
	"docs/install.md: podman pull ghcr.io/kilnhq/kiln:v0.1.0":                                               "needs podman, the network and public hosting (the page marks it so)",
	"docs/integrations.md: # .pre-commit-config.yaml":                                                       "a pre-commit configuration, not kiln input (TestPreCommit* run the hooks)",
	"docs/integrations.md: - uses: kilnhq/kiln@v0.1.0":                                                      "a GitHub Actions step, not kiln input (TestAction* run the action)",
	"docs/integrations.md: apiVersion: v1":                                                                  "an excerpt (…) of examples/argocd's argocd-cm, which TestArgoCDConfigMapHasHealthCheck checks",
	"docs/lint.md: kiln fetch .":                                                                            "needs the network (the one kiln command that opens connections)",
	"docs/lint.md: metadata:":                                                                               "an excerpt of a manifest: where the annotation goes",
	"docs/lint.md: spec:":                                                                                   "an excerpt of a manifest: where the annotation goes on a pod template",
	"docs/policies.md: kiln policies export --kube-version 1.33 | kubectl apply -f -":                       "needs kubectl and a cluster (the export alone runs in the next line)",
	"docs/policies.md: kiln test policies/ -f junit":                                                        "names the reader's policies/ folder",
	"docs/policies.md: apiVersion: kiln.dev/v1alpha1":                                                       "the kiln test file of admit/policytest/testdata/readme, with its policies and objects there: admit/policytest's TestDocsExample checks they are the same and runs it",
}

// docsPagesNotWalked are the pages whose examples other tests run.
var docsPagesNotWalked = map[string]string{
	"docs/reference/rules.md": "generated from the rules (TestReferenceDocs); TestRuleExamples lints every example as printed",
	"docs/reference/cli.md":   "generated from the commands' help (TestReferenceDocs): usage lines, no examples",
	"docs/design.md":          "the design: a diagram, no examples",
}

// docsRan counts what TestDocsExamples ran, by kind (console, sh, yaml).
var docsRan = map[string]*atomic.Int32{"console": {}, "sh": {}, "yaml": {}}

// A docBlock is a fenced code block of a page.
type docBlock struct {
	page, lang, note, body string
	line                   int
}

var (
	noteRE    = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)
	exitsRE   = regexp.MustCompile(`\bexits (\d)\b`)
	commandRE = regexp.MustCompile(`^kiln (lint|build|fix|diff|test|fetch|policies|explain|rules|psa|crds|report|version|argocd)\b`)
)

// docBlocks returns a page's fenced code blocks, each with the HTML
// comment right above it (its note), if any.
func docBlocks(page, text string) []docBlock {
	var out []docBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		b := docBlock{page: page, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(lines[i], "```"))}
		for k := i - 1; k >= 0; k-- {
			if strings.TrimSpace(lines[k]) == "" {
				continue
			}
			if m := noteRE.FindStringSubmatch(lines[k]); m != nil {
				b.note = m[1]
			}
			break
		}
		var body strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body.WriteString(lines[i] + "\n")
		}
		b.body = body.String()
		out = append(out, b)
	}
	return out
}

// docPages are the Markdown pages under docs/, relative to the repository.
func docPages(t *testing.T) []string {
	t.Helper()
	var pages []string
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, err := filepath.Rel(repoRoot, p)
		pages = append(pages, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pages)
	return pages
}

// TestDocsExamples: every example of the pages under docs/ runs as
// pasted. A console block's commands ($ kiln …) print what the page shows,
// byte for byte (stdout, then stderr), or, under <!-- output: abridged -->,
// the lines it shows in that order. A sh block's kiln commands run one
// after the other in a copy of the repository and exit as their comment
// says ("exits 0"; "exit 1 if …" is a condition), else 0 or 1: kiln
// judged its input. A yaml block is
// a manifest (judged by kiln lint: no schema error) or a .kiln.yaml (read
// by kiln lint: no error but files of the reader's repository it names).
// What cannot run here is in docsNotRun with the reason; a kiln command in
// a block of another language fails the test (make it sh or console).
func TestDocsExamples(t *testing.T) {
	used := map[string]bool{}
	var mu sync.Mutex
	notRun := func(key string) bool {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := docsNotRun[key]; ok {
			used[key] = true
			return true
		}
		return false
	}
	t.Run("pages", func(t *testing.T) {
		for _, page := range docPages(t) {
			if docsPagesNotWalked[page] != "" {
				continue
			}
			data, err := os.ReadFile(filepath.Join(repoRoot, page))
			if err != nil {
				t.Fatal(err)
			}
			blocks := docBlocks(page, string(data))
			t.Run(strings.TrimPrefix(page, "docs/"), func(t *testing.T) {
				t.Parallel()
				var copyDir string // a copy of the repository, made for the page's first kiln command of a sh block
				dir := func() string {
					if copyDir == "" {
						copyDir = copyRepo(t)
					}
					return copyDir
				}
				for _, b := range blocks {
					switch b.lang {
					case "console":
						runConsole(t, b)
					case "sh":
						runShell(t, b, dir, notRun)
					case "yaml":
						checkYAML(t, b, notRun)
					default:
						for _, l := range strings.Split(b.body, "\n") {
							if commandRE.MatchString(l) && !strings.Contains(l, "[") {
								t.Errorf("%s:%d: a kiln command in a ```%s block: %q (mark the block sh, or console with its output, so that it runs)", b.page, b.line, b.lang, l)
							}
						}
					}
				}
			})
		}
	})
	for key := range docsNotRun {
		if !used[key] {
			t.Errorf("docsNotRun lists %q, which no page of docs/ holds any more: remove it", key)
		}
	}
	t.Logf("ran %d console commands, %d sh commands, judged %d yaml blocks; %d examples listed as not run", docsRan["console"].Load(), docsRan["sh"].Load(), docsRan["yaml"].Load(), len(docsNotRun))
	if docsRan["console"].Load() == 0 || docsRan["sh"].Load() < 5 || docsRan["yaml"].Load() < 5 {
		t.Error("the docs lost their examples, or this test stopped finding them")
	}
}

// kilnIn runs the kiln binary in dir with its own cache.
func kilnIn(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(kilnBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir(), "NO_COLOR=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("kiln %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// runConsole runs each "$ kiln …" of a console block in the repository
// and compares what it prints with the lines under it.
func runConsole(t *testing.T, b docBlock) {
	t.Helper()
	type step struct {
		cmd  string
		want []string
	}
	var steps []step
	for _, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{cmd: c})
			continue
		}
		if len(steps) == 0 {
			t.Errorf("%s:%d: a console block must start with a $ command", b.page, b.line)
			return
		}
		steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
	}
	for _, s := range steps {
		args, err := shellFields(s.cmd)
		if err != nil || len(args) == 0 || args[0] != "kiln" {
			t.Errorf("%s:%d: %q is not a kiln command this test can run (%v)", b.page, b.line, s.cmd, err)
			continue
		}
		docsRan["console"].Add(1)
		code, stdout, stderr := kilnIn(t, repoRoot, "", args[1:]...)
		if code > 1 {
			t.Errorf("%s:%d: %s: exit %d\n%s", b.page, b.line, s.cmd, code, stderr)
			continue
		}
		got := stdout + stderr
		want := strings.Join(s.want, "\n") + "\n"
		switch b.note {
		case "output: abridged":
			if !subsequence(strings.Split(got, "\n"), s.want) {
				t.Errorf("%s:%d: %s prints lines the page does not show in its order (abridged):\n--- got ---\n%s--- page ---\n%s", b.page, b.line, s.cmd, got, want)
			}
		case "":
			if got != want {
				t.Errorf("%s:%d: %s prints something else than the page shows (mark an excerpt <!-- output: abridged -->):\n--- got ---\n%s--- page ---\n%s", b.page, b.line, s.cmd, got, want)
			}
		default:
			t.Errorf("%s:%d: unknown note %q above a console block (known: output: abridged)", b.page, b.line, b.note)
		}
	}
}

// subsequence reports whether want's lines appear in got in their order.
func subsequence(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// runShell runs a sh block's kiln commands, one after the other, in the
// directory dir returns.
func runShell(t *testing.T, b docBlock, dir func() string, notRun func(string) bool) {
	t.Helper()
	for _, l := range strings.Split(b.body, "\n") {
		line := strings.TrimSpace(l)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmdline, comment, _ := strings.Cut(line, " #")
		cmdline = strings.TrimSpace(cmdline)
		if notRun(b.page + ": " + cmdline) {
			continue
		}
		args, err := shellFields(cmdline)
		switch {
		case err != nil:
			t.Errorf("%s:%d: %q: %v", b.page, b.line, cmdline, err)
			continue
		case len(args) == 0 || args[0] != "kiln":
			t.Errorf("%s:%d: %q is not a kiln command: list it in docsNotRun with the reason", b.page, b.line, cmdline)
			continue
		}
		docsRan["sh"].Add(1)
		code, stdout, stderr := kilnIn(t, dir(), "", args[1:]...)
		if m := exitsRE.FindStringSubmatch(comment); m != nil {
			if want, _ := strconv.Atoi(m[1]); code != want {
				t.Errorf("%s:%d: %s: exit %d, the page says %d\n%s%s", b.page, b.line, cmdline, code, want, stdout, stderr)
			}
		} else if code > 1 {
			t.Errorf("%s:%d: %s: exit %d (an input or usage error)\n%s%s", b.page, b.line, cmdline, code, stdout, stderr)
		}
	}
}

// shellFields splits a command line as sh does words: blanks separate,
// single and double quotes group. A pipe, a redirection or a substitution
// is an error: such a line runs more than kiln.
func shellFields(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case strings.ContainsRune("|><;&$`", r):
			return nil, errors.New("a pipe, redirection or substitution: list the line in docsNotRun with the reason")
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, errors.New("an unclosed quote")
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// checkYAML judges a yaml block: a manifest with kiln lint (exit 0 or 1,
// no schema error), a .kiln.yaml by kiln lint reading it.
func checkYAML(t *testing.T, b docBlock, notRun func(string) bool) {
	t.Helper()
	first := ""
	for _, l := range strings.Split(b.body, "\n") {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if notRun(b.page + ": " + first) {
		return
	}
	docsRan["yaml"].Add(1)
	dir := t.TempDir()
	file := filepath.Join(dir, "example.yaml")
	if err := os.WriteFile(file, []byte(b.body), 0o644); err != nil {
		t.Fatal(err)
	}
	switch {
	case isManifest(b.body):
		empty := filepath.Join(t.TempDir(), ".kiln.yaml")
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := kilnIn(t, dir, "", "lint", "-f", "json", "--config", empty, "example.yaml")
		if code > 1 && !onlyMissingFiles(stderr, b.body) {
			t.Errorf("%s:%d: the manifest does not lint: exit %d\n%s", b.page, b.line, code, stderr)
			return
		}
		if code > 1 {
			return
		}
		var rep struct {
			Findings []struct{ Rule, Severity, Message string } `json:"findings"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%s:%d: %v\n%s", b.page, b.line, err, stdout)
		}
		for _, f := range rep.Findings {
			if strings.HasPrefix(f.Rule, "schema/") && f.Severity == "error" {
				t.Errorf("%s:%d: the manifest is not one the API server accepts: %s %s", b.page, b.line, f.Rule, f.Message)
			}
		}
	case isConfig(b.body):
		code, _, stderr := kilnIn(t, dir, "", "lint", "--config", file, "-")
		if code > 1 && !onlyMissingFiles(stderr, b.body) {
			t.Errorf("%s:%d: kiln does not read this .kiln.yaml: exit %d\n%s", b.page, b.line, code, stderr)
		}
	default:
		t.Errorf("%s:%d: a yaml block that is neither a manifest nor a .kiln.yaml (first line %q): list it in docsNotRun with the reason", b.page, b.line, first)
	}
}

// isManifest reports whether every document of a YAML stream names an
// apiVersion and a kind.
func isManifest(body string) bool {
	dec := yaml.NewDecoder(strings.NewReader(body))
	n := 0
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return n > 0
		}
		if err != nil || doc["apiVersion"] == nil || doc["kind"] == nil {
			return false
		}
		n++
	}
}

// isConfig reports whether kiln reads body as a .kiln.yaml (keys and
// values; the rules it names are checked by kiln lint).
func isConfig(body string) bool {
	_, err := settings.ReadFile(".kiln.yaml", []byte(body))
	return err == nil
}

// onlyMissingFiles reports whether each line of stderr says that a file
// the example names does not exist: a file of the reader's repository.
func onlyMissingFiles(stderr, body string) bool {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		if !strings.Contains(l, "no such file or directory") {
			return false
		}
		named := false
		for _, f := range strings.Fields(l) {
			f = strings.Trim(f, ":,\"'")
			if (strings.Contains(f, "/") || strings.HasSuffix(f, ".yaml")) && strings.Contains(body, f) {
				named = true
			}
		}
		if !named {
			return false
		}
	}
	return len(lines) > 0
}

// copyRepo copies the repository's files (git ls-files: tracked, and new
// ones not ignored) into a temporary directory, where commands that write
// files may run.
func copyRepo(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestDocsExampleHelpers(t *testing.T) {
	blocks := docBlocks("p.md", "text\n<!-- output: abridged -->\n```console\n$ kiln version\nkiln v1\n```\n\n```sh\nkiln lint .\n```\n")
	if len(blocks) != 2 || blocks[0].lang != "console" || blocks[0].note != "output: abridged" || blocks[0].line != 3 ||
		blocks[0].body != "$ kiln version\nkiln v1\n" || blocks[1].lang != "sh" || blocks[1].note != "" || blocks[1].body != "kiln lint .\n" {
		t.Errorf("docBlocks = %+v", blocks)
	}
	for _, tt := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"kiln policies export --namespace-selector 'env=prod,team!=ml'", []string{"kiln", "policies", "export", "--namespace-selector", "env=prod,team!=ml"}, false},
		{`kiln lint "a b"  c`, []string{"kiln", "lint", "a b", "c"}, false},
		{"kiln policies export | kubectl apply -f -", nil, true},
		{"kiln diff > diff.md", nil, true},
		{"kiln lint 'open", nil, true},
	} {
		got, err := shellFields(tt.in)
		if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
			t.Errorf("shellFields(%q) = %q, %v", tt.in, got, err)
		}
	}
	if !subsequence([]string{"a", "b", "c", ""}, []string{"a", "c"}) || subsequence([]string{"a", "b"}, []string{"b", "a"}) {
		t.Error("subsequence")
	}
	if !isManifest("apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Service\n") || isManifest("apiVersion: v1\nkind: Pod\n---\nspec: {}\n") || isManifest("metadata: {}\n") {
		t.Error("isManifest")
	}
	if !isConfig("rules:\n  \"workload/*\": off\n") || isConfig("metadata: {}\n") {
		t.Error("isConfig")
	}
	const cfg = "policies: [policies/]\n"
	if !onlyMissingFiles("kiln: cel: --policy: policies/: cannot read: no such file or directory\n", cfg) ||
		onlyMissingFiles("kiln: cel: --policy: other/: cannot read: no such file or directory\n", cfg) ||
		onlyMissingFiles("x.yaml:3:3: rules: unknown rule \"a/b\"\n", cfg) {
		t.Error("onlyMissingFiles")
	}
}
