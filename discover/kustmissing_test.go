package discover

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestMissingResource: a resources entry that names nothing is reported at
// its line, in plain words; other build errors are left as they are.
func TestMissingResource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kustomization.yaml")
	if err := os.WriteFile(file, []byte("resources:\n- deployment.yaml\n- missing.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	raw := errors.New("accumulating resources: accumulation err='accumulating resources from 'missing.yaml': evalsymlink failure on 'missing.yaml' : lstat missing.yaml: no such file or directory': must build at directory: not a valid directory: evalsymlink failure on 'missing.yaml' : lstat missing.yaml: no such file or directory")
	e, ok := missingResource(file, raw)
	if !ok {
		t.Fatal("not recognised")
	}
	if e.Pos.Line != 3 || e.Pos.Column != 3 {
		t.Errorf("at %d:%d, want 3:3", e.Pos.Line, e.Pos.Column)
	}
	if want := `kustomize build failed: resource "missing.yaml" names no file or directory; fix the path or remove the entry`; e.Msg != want {
		t.Errorf("message %q, want %q", e.Msg, want)
	}
	nested := errors.New("accumulating resources: accumulation err='accumulating resources from 'deployment.yaml': ... accumulating resources from 'gone.yaml': lstat gone.yaml: no such file or directory'")
	if e, ok := missingResource(file, nested); !ok || e.Pos.Line != 2 || e.Msg != `kustomize build failed: resource "deployment.yaml" cannot be built: its resource "gone.yaml" names no file or directory; fix the path or remove the entry` {
		t.Errorf("nested: %v %v", e, ok)
	}
	if _, ok := missingResource(file, errors.New("merging from generator: id exists")); ok {
		t.Error("an unrelated error was taken for a missing resource")
	}
}
