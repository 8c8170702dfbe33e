package lint_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/rules"
)

// TestGiven: the --policy paths and the --storage-classes file are read
// once, however often checkers ask, each asking for objects of its own;
// problems are reported as reading the files would report them.
func TestGiven(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policies", "p.yaml")
	classes := filepath.Join(dir, "classes.yaml")
	write(t, policy, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n")
	write(t, classes, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\n")
	opts := rules.DefaultOptions()
	opts.Policies = []string{filepath.Join(dir, "policies")}
	opts.StorageClasses = classes
	g := lint.NewGiven(opts)

	first, errs := g.Objects(rules.Policies)
	if len(first) != 1 || first[0].Name != "p" || len(errs) > 0 {
		t.Fatalf("Policies: %v, %v", first, errs)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	again, errs := g.Objects(rules.Policies) // read before: the files are not read again
	if len(again) != 1 || again[0] == first[0] || len(errs) > 0 {
		t.Errorf("second ask: %v (first %v), %v: want a fresh copy of the same object", again, first, errs)
	}
	// The class file was never asked for: it is read on the first ask, and is gone.
	if objs, errs := g.Objects(rules.StorageClasses); len(objs) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "classes.yaml: cannot read") {
		t.Errorf("StorageClasses of a removed file: %v, %v", objs, errs)
	}
	if objs, errs := g.Objects(rules.Namespaces); objs != nil || errs != nil {
		t.Errorf("Namespaces: %v, %v; nothing is given for them", objs, errs)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
