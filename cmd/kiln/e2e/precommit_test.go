package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo is a temporary Git repository whose commits run pre-commit hooks.
type gitRepo struct {
	t   *testing.T
	dir string
	env []string
}

// newHookedRepo makes a Git repository with a .pre-commit-config.yaml using
// the hooks of this repository (at its HEAD commit) and installs pre-commit
// as its Git hook. PATH holds kiln for the -system hooks.
func newHookedRepo(t *testing.T, hooks string) *gitRepo {
	t.Helper()
	git := requireTool(t, "git")
	preCommit := requireTool(t, "pre-commit")
	head := exec.Command(git, "rev-parse", "HEAD")
	head.Dir = repoRoot
	rev, err := head.Output()
	if err != nil {
		if inCI() {
			t.Fatalf("%s is not a Git checkout: %v", repoRoot, err)
		}
		t.Skipf("%s is not a Git checkout", repoRoot)
	}
	show := exec.Command(git, "cat-file", "-e", "HEAD:.pre-commit-hooks.yaml")
	show.Dir = repoRoot
	if err := show.Run(); err != nil {
		t.Fatalf("HEAD of %s has no .pre-commit-hooks.yaml (pre-commit installs hooks from a commit)", repoRoot)
	}
	home := t.TempDir()
	gomodcache := strings.TrimSpace(goEnv(t, "GOMODCACHE"))
	env := withPath(os.Environ(), binDir)
	env = append(env,
		"HOME="+home,
		"PRE_COMMIT_HOME="+filepath.Join(home, "pre-commit"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com",
		// pre-commit's golang hooks run `go install ./...` with GOPATH in its
		// cache and HOME moved here: share the module and build caches so that
		// nothing is downloaded or compiled again.
		"GOMODCACHE="+gomodcache,
		"GOCACHE="+strings.TrimSpace(goEnv(t, "GOCACHE")),
		"GOTOOLCHAIN=local",
	)
	r := &gitRepo{t: t, dir: t.TempDir(), env: env}
	r.must(git, "init", "-q", "-b", "main")
	config := "repos:\n  - repo: " + repoRoot + "\n    rev: " + strings.TrimSpace(string(rev)) + "\n    hooks:\n" + hooks
	writeFiles(t, r.dir, map[string]string{".pre-commit-config.yaml": config})
	r.must(git, "add", ".pre-commit-config.yaml")
	r.must(git, "commit", "-q", "--no-verify", "-m", "pre-commit config")
	r.must(preCommit, "install")
	return r
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func (r *gitRepo) run(name string, args ...string) result {
	r.t.Helper()
	return runIn(r.t, r.dir, r.env, name, args...)
}

func (r *gitRepo) must(name string, args ...string) result {
	r.t.Helper()
	res := r.run(name, args...)
	if res.code != 0 {
		r.t.Fatalf("%s %s: exit %d\n%s%s", name, strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return res
}

// commit stages files and commits them through the pre-commit hook.
func (r *gitRepo) commit(msg string, files map[string]string) result {
	r.t.Helper()
	writeFiles(r.t, r.dir, files)
	args := []string{"add"}
	for f := range files {
		args = append(args, f)
	}
	r.must("git", args...)
	return r.run("git", "commit", "-m", msg)
}

func (r *gitRepo) head() string {
	r.t.Helper()
	return strings.TrimSpace(r.must("git", "rev-parse", "HEAD").stdout)
}

// checkLintHook commits a good manifest (must pass) and a bad one (must be blocked).
func checkLintHook(t *testing.T, r *gitRepo) {
	t.Helper()
	good := r.commit("good manifest", map[string]string{"deploy/worker.yaml": goodDeployment, "deploy/app.yaml": appSpec})
	if good.code != 0 {
		t.Fatalf("a good manifest was blocked: exit %d\n%s%s", good.code, good.stdout, good.stderr)
	}
	if !strings.Contains(good.stdout+good.stderr, "Passed") {
		t.Errorf("the hook did not run on the good commit:\n%s%s", good.stdout, good.stderr)
	}
	before := r.head()
	bad := r.commit("bad manifest", map[string]string{"deploy/rogue.yaml": badDeployment})
	out := bad.stdout + bad.stderr
	if bad.code == 0 {
		t.Fatalf("a bad manifest was committed:\n%s", out)
	}
	if !strings.Contains(out, "psa/privileged") || !strings.Contains(out, "deploy/rogue.yaml") {
		t.Errorf("the hook output does not name the finding and file:\n%s", out)
	}
	if r.head() != before {
		t.Errorf("HEAD moved: the bad commit went through")
	}
	// Non-manifests the hook excludes (.github workflows, kustomization) do not break it.
	other := r.commit("workflow", map[string]string{
		".github/workflows/ci.yml":  "on: push\njobs: {}\n",
		"deploy/kustomization.yaml": "resources: [worker.yaml]\n",
		"deploy/rogue.yaml":         goodDeployment,
	})
	if other.code != 0 {
		t.Errorf("non-manifest YAML blocked the commit:\n%s%s", other.stdout, other.stderr)
	}
	// The repository's context counts though only one file is staged: a
	// Namespace committed earlier lets its privileged workload through,
	// as a whole-tree lint would (--repo-context in the hook).
	ns := r.commit("privileged namespace", map[string]string{"ops/ns-tools.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: tools\n  labels: {pod-security.kubernetes.io/enforce: privileged}\n"})
	if ns.code != 0 {
		t.Fatalf("a Namespace was blocked:\n%s%s", ns.stdout, ns.stderr)
	}
	tools := r.commit("privileged tool", map[string]string{"deploy/tools.yaml": strings.ReplaceAll(badDeployment, "namespace: shop", "namespace: tools")})
	if tools.code != 0 {
		t.Errorf("a privileged workload in a privileged Namespace committed earlier was blocked: the hook did not read the repository's context\n%s%s", tools.stdout, tools.stderr)
	}
}

// TestPreCommitLintSystem runs the kiln-lint-system hook (kiln on PATH).
func TestPreCommitLintSystem(t *testing.T) {
	r := newHookedRepo(t, "      - id: kiln-lint-system\n")
	checkLintHook(t, r)
}

// TestPreCommitLintGolang runs the kiln-lint hook, which pre-commit builds
// from this repository with `go install ./...` (modules from the shared
// module cache, else the module proxy).
func TestPreCommitLintGolang(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kiln inside pre-commit; -short skips it")
	}
	r := newHookedRepo(t, "      - id: kiln-lint\n")
	// PATH without the test's kiln: the hook must use the one pre-commit built.
	var env []string
	for _, kv := range r.env {
		if strings.HasPrefix(kv, "PATH=") {
			kv = "PATH=" + strings.TrimPrefix(kv, "PATH="+binDir+string(os.PathListSeparator))
		}
		env = append(env, kv)
	}
	r.env = env
	checkLintHook(t, r)
}

// TestPreCommitBuildCheck runs kiln-build-check-system: compiled output that
// matches the spec passes, a spec changed without rebuilding is blocked.
func TestPreCommitBuildCheck(t *testing.T) {
	r := newHookedRepo(t, "      - id: kiln-build-check-system\n        args: [specs/, -o, deploy/]\n")
	writeFiles(t, r.dir, map[string]string{"specs/shop.yaml": appSpec})
	r.must(kilnBin, "build", "specs/", "-o", "deploy/")
	r.must("git", "add", "specs", "deploy")
	if res := r.run("git", "commit", "-m", "spec and its output"); res.code != 0 {
		t.Fatalf("up-to-date output was blocked:\n%s%s", res.stdout, res.stderr)
	}
	before := r.head()
	res := r.commit("stale", map[string]string{"specs/shop.yaml": strings.Replace(appSpec, "replicas: 2", "replicas: 3", 1)})
	if res.code == 0 {
		t.Fatalf("a spec changed without rebuilding was committed:\n%s%s", res.stdout, res.stderr)
	}
	if r.head() != before {
		t.Errorf("HEAD moved")
	}
	r.must(kilnBin, "build", "specs/", "-o", "deploy/")
	r.must("git", "add", "deploy")
	if res := r.run("git", "commit", "-m", "rebuilt"); res.code != 0 {
		t.Fatalf("rebuilt output was blocked:\n%s%s", res.stdout, res.stderr)
	}
}
