// Package golden compares test output with files under testdata/ and
// rewrites them when tests run with -update (`go test ./... -update`).
//
// Every package with tests imports it (at least for the flag), so that
// -update is defined in each test binary that `go test ./...` builds.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is set by -update: golden files are rewritten instead of compared.
var Update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Check compares got with the golden file at path (relative to the test's
// package directory), or rewrites it with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update to accept):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
