package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKilledBuildLeavesFilesWhole kills `kiln build -o` with SIGKILL while it
// rewrites hundreds of files and checks that every file it manages holds
// either the old build or the new one, whole: a write is a rename of a
// finished temporary file, so no kill can leave a part.
func TestKilledBuildLeavesFilesWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "kiln")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	specs, out := filepath.Join(work, "specs"), filepath.Join(work, "out")
	writeSpecs := func(tag string) {
		if err := os.MkdirAll(specs, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 400; i++ {
			spec := fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: app%d, namespace: ns%d}
spec:
  services:
    web:
      ports: {http: 8080}
      containers: [{name: app, image: "ghcr.io/acme/app:%s"}]
`, i, i, tag)
			if err := os.WriteFile(filepath.Join(specs, fmt.Sprintf("app%03d.yaml", i)), []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// snapshot reads the managed files; temporary files a kill leaves behind are not managed.
	snapshot := func() map[string][]byte {
		files := snapshotOf(t, out)
		for p := range files {
			if strings.HasSuffix(p, ".tmp") {
				delete(files, p)
			}
		}
		return files
	}

	writeSpecs("1.0")
	if b, err := exec.Command(bin, "build", specs, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("first build: %v\n%s", err, b)
	}
	old := snapshot()
	writeSpecs("2.0")
	if b, err := exec.Command(bin, "build", specs, "-o", filepath.Join(work, "want")).CombinedOutput(); err != nil {
		t.Fatalf("reference build: %v\n%s", err, b)
	}
	newByName := map[string][]byte{}
	for p, b := range snapshotOf(t, filepath.Join(work, "want")) {
		newByName[strings.TrimPrefix(p, filepath.Join(work, "want"))] = b
	}

	cmd := exec.Command(bin, "build", specs, "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once the first new file has landed, so the kill falls mid-run.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(filepath.Join(out, "ns0", "deployment-web.yaml")); bytes.Contains(b, []byte(":2.0")) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	got := snapshot()
	var updated, kept int
	for p, b := range old {
		now, ok := got[p]
		if !ok {
			t.Errorf("%s: removed by a killed build", p)
			continue
		}
		switch {
		case bytes.Equal(now, b):
			kept++
		case bytes.Equal(now, newByName[strings.TrimPrefix(p, out)]):
			updated++
		default:
			t.Errorf("%s: neither the old nor the new content:\n%s", p, now)
		}
	}
	t.Logf("after the kill: %d files updated, %d still old, of %d", updated, kept, len(old))
	if updated == 0 {
		t.Errorf("the kill came before any write; the test did not exercise a write")
	}
}

func snapshotOf(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[p] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
