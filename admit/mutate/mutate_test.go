package mutate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kilnhq/kiln/admit/mutate"
	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// TestMutated lints each fixture with every checker, as kiln lint does, and
// compares the findings and the objects as admitted (after mutating
// admission, defaulting and the create strategy) with the fixture's golden
// file (go test ./admit/mutate -update rewrites them).
func TestMutated(t *testing.T) {
	for _, name := range []string{"harden", "team", "params", "reinvocation", "failure", "refused", "templates", "notes"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("testdata", name+".yaml")
			got := lintFixture(t, file)
			golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
		})
	}
}

// lintFixture returns the findings and the admitted objects other than the
// policies, bindings and Namespaces.
func lintFixture(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := manifest.Parse(file, data)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	opts := rules.DefaultOptions()
	res, err := lint.Judge(&rules.Engine{Checkers: checkers.All(), Options: opts}, objs, []rules.FileObjects{{File: file}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range res.Findings {
		fmt.Fprintf(&b, "%d:%d %s %s %s %s: %s\n", f.Pos.Line, f.Pos.Column, f.Object, f.Severity, f.Rule, f.Field, f.Message)
	}
	for _, o := range objs {
		if mutate.IsPolicyObject(o) || o.Group() == "admissionregistration.k8s.io" || o.Kind == "Namespace" {
			continue
		}
		content, err := o.Content()
		if err != nil {
			t.Fatal(err)
		}
		out, err := yaml.Marshal(content)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "--- %s (refused: %v)\n%s", o.Ref(), o.Refused, out)
	}
	return b.String()
}
