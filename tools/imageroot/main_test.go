package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAssemble builds a context with this test's own static binary as kiln
// and busybox, and checks the layout the Dockerfile copies; a dynamically
// linked program or one of another architecture is refused.
func TestAssemble(t *testing.T) {
	dir := t.TempDir()
	static := filepath.Join(dir, "static")
	build := exec.Command("go", "build", "-o", static, "./testdata/hello")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx := filepath.Join(dir, "context")
	kiln := filepath.Join(ctx, "linux_amd64/usr/local/bin/kiln")
	if err := copyFile(static, kiln, 0o755); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, "plugin.yaml")
	if err := os.WriteFile(plugin, []byte("kind: ConfigManagementPlugin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := assemble(ctx, "amd64", static, plugin); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(ctx, "linux_amd64")
	for _, a := range Applets {
		if target, err := os.Readlink(filepath.Join(root, "bin", a)); err != nil || target != "busybox" {
			t.Errorf("bin/%s → %q (%v), want a link to busybox", a, target, err)
		}
	}
	if st, err := os.Stat(filepath.Join(root, "tmp")); err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("tmp: %v %v, want drwxrwxrwt", st.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/passwd")); !strings.Contains(string(b), "argocd:x:999:999:") || !strings.Contains(string(b), "nobody:x:65534:") {
		t.Errorf("etc/passwd lacks argocd (999) or nobody:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ctx, "home/argocd/cmp-server/config/plugin.yaml")); string(b) != "kind: ConfigManagementPlugin\n" {
		t.Errorf("plugin.yaml not where the CMP server reads it: %q", b)
	}

	if err := copyFile(static, filepath.Join(ctx, "linux_arm64/usr/local/bin/kiln"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := assemble(ctx, "arm64", static, plugin); err == nil || !strings.Contains(err.Error(), "not arm64") {
		t.Errorf("an amd64 kiln for an arm64 image: %v", err)
	}
	// ls is dynamically linked on every Linux distribution the tests run on.
	dynamic, err := exec.LookPath("ls")
	if err != nil {
		t.Fatal(err)
	}
	if err := assemble(ctx, "amd64", dynamic, plugin); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("a dynamically linked busybox (%s): %v", dynamic, err)
	}
}
