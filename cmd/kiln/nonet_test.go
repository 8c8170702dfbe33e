package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestNoNetwork runs the real binary inside a network namespace without
// interfaces (`unshare -n`) and checks that every command gives the same
// output and exit code as outside it: kiln never needs the network.
func TestNoNetwork(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil || exec.Command("unshare", "-n", "true").Run() != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run this test as root with unshare (util-linux): %v", err)
		}
		t.Skip("unshare -n is not available (needs root)")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "kiln")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root, _ := filepath.Abs("../..")
	runs := [][]string{
		{"lint", "-f", "json", filepath.Join(root, "testdata")},
		{"rules"},
		{"version"},
		// Flux Kustomizations built offline (discover/flux).
		{"lint", "-f", "json", filepath.Join(root, "discover", "flux", "testdata", "subst")},
		{"lint", "-f", "json", filepath.Join(root, "discover", "flux", "testdata", "parent")},
	}
	if _, err := os.Stat(filepath.Join(root, "examples")); err == nil {
		runs = append(runs, []string{"lint", "-f", "json", filepath.Join(root, "examples")})
	}
	for _, args := range runs {
		with, withCode := runBin(t, "unshare", append([]string{"-n", bin}, args...)...)
		without, withoutCode := runBin(t, bin, args...)
		if withCode != withoutCode || !bytes.Equal(with, without) {
			t.Errorf("kiln %v differs without network: exit %d vs %d\n--- no network ---\n%s\n--- network ---\n%s", args, withCode, withoutCode, with, without)
		}
	}
}

func runBin(t *testing.T, name string, args ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.Bytes(), cmd.ProcessState.ExitCode()
}
