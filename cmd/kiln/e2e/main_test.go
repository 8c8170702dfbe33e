package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
)

var (
	// repoRoot is the module root (the parent of cmd/kiln/e2e/).
	repoRoot string
	// binDir holds the kiln binary built for these tests.
	binDir string
	// kilnBin is the path of that binary.
	kilnBin string
)

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	root, err := filepath.Abs("../../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	repoRoot = root
	tmp, err := os.MkdirTemp("", "kiln-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	binDir = filepath.Join(tmp, "bin")
	kilnBin = filepath.Join(binDir, "kiln")
	cmd := exec.Command("go", "build", "-o", kilnBin, "./cmd/kiln")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/kiln: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// inCI reports whether the tests run in CI (CI set, as GitHub Actions,
// GitLab and most CI systems set it, and not "false" or "0"), where every
// tool must be present.
func inCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// requireTool finds a tool on PATH (then in the extra directories): missing,
// it fails the test in CI and skips it elsewhere.
func requireTool(t *testing.T, name string, extraDirs ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range extraDirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	how := installHints[name]
	if how == "" {
		how = "install it with your package manager"
	}
	if inCI() {
		t.Fatalf("%s is not installed; .ci/run installs it (%s). CI is set, so this is a failure, not a skip", name, how)
	}
	t.Skipf("%s is not installed, so this test skips (with CI=true it fails); to run it: %s", name, how)
	return ""
}

// installHints say how to get each tool the e2e tests run (.ci/run does the same).
var installHints = map[string]string{
	"kustomize":  "go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.1",
	"pre-commit": "apt-get install pre-commit (or pipx install pre-commit)",
	"busybox":    "apt-get install busybox-static (the image's own busybox)",
	"podman":     "apt-get install podman runc (the image tests build and run the image with them)",
	"runc":       "apt-get install runc",
	"curl":       "apt-get install curl",
	"make":       "apt-get install make",
	"git":        "apt-get install git",
	"chromium":   "apt-get install chromium (Debian's; the HTML report's browser test)",
}

// goBinDir is where `go install` puts tools ($GOBIN or $GOPATH/bin).
func goBinDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) != "" {
		return strings.TrimSpace(lines[0])
	}
	gopath := strings.TrimSpace(lines[len(lines)-1])
	return filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "bin")
}

// result is what a command did.
type result struct {
	code           int
	stdout, stderr string
}

// runIn runs a command in dir with env (nil: the test's own environment plus
// kiln's directory first on PATH) and returns its exit code and output.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	if env == nil {
		env = withPath(os.Environ(), binDir)
	}
	cmd := exec.Command(lookPathIn(env, name), args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		r.code = ee.ExitCode()
	}
	return r
}

// lookPathIn finds a command the way a shell with env would: on env's PATH
// (exec.Command looks on the test's own PATH).
func lookPathIn(env []string, name string) string {
	if strings.ContainsRune(name, filepath.Separator) {
		return name
	}
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(path) {
				p := filepath.Join(d, name)
				if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
					return p
				}
			}
		}
	}
	return name
}

// withPath returns env with dirs prepended to PATH.
func withPath(env []string, dirs ...string) []string {
	out := make([]string, 0, len(env)+1)
	path := os.Getenv("PATH")
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			path = strings.TrimPrefix(kv, "PATH=")
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+strings.Join(append(dirs, path), string(os.PathListSeparator)))
}

// noConfig returns an empty config file: kiln's own fixtures are judged
// with kiln's defaults, not with the repository's .kiln.yaml above them
// (which leaves testdata out of `kiln lint .`).
func noConfig(t *testing.T) string {
	t.Helper()
	return filepath.Join(writeTree(t, map[string]string{".kiln.yaml": ""}), ".kiln.yaml")
}

// writeTree writes files (relative path → content) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Manifests shared by the tests.
const (
	// goodDeployment passes the restricted Pod Security profile.
	goodDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
  namespace: shop
spec:
  selector:
    matchLabels: {app: worker}
  template:
    metadata:
      labels: {app: worker}
    spec:
      securityContext:
        runAsNonRoot: true
        seccompProfile: {type: RuntimeDefault}
      containers:
        - name: worker
          image: ghcr.io/acme/worker:1.4.2
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {drop: [ALL]}
          resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 128Mi}}
`
	// badDeployment runs a privileged container: an error at every Pod Security level.
	badDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: rogue
  namespace: shop
spec:
  selector:
    matchLabels: {app: rogue}
  template:
    metadata:
      labels: {app: rogue}
    spec:
      containers:
        - name: rogue
          image: ghcr.io/acme/rogue:1.0
          securityContext:
            privileged: true
          resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 128Mi}}
`
	// warnedPod lands in a namespace that enforces nothing and warns at
	// restricted: warnings, no errors.
	warnedPod = `apiVersion: v1
kind: Namespace
metadata:
  name: lab
  labels:
    pod-security.kubernetes.io/enforce: privileged
    pod-security.kubernetes.io/warn: restricted
---
apiVersion: v1
kind: Pod
metadata:
  name: experiment
  namespace: lab
spec:
  containers:
    - name: app
      image: ghcr.io/acme/lab:1.0
`
	// appSpec is a kiln App spec.
	appSpec = `apiVersion: kiln.dev/v1alpha1
kind: App
metadata:
  name: shop
  namespace: shop
spec:
  services:
    web:
      replicas: 2
      ports: {http: 8080}
      containers:
        - name: app
          image: ghcr.io/acme/shop:1.4.2
          resources: {cpu: 100m, memory: 128Mi}
          ready: {httpGet: {path: /healthz, port: http}}
`
)
