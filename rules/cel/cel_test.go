package cel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// lint runs the "cel" checker over a YAML stream and returns each finding as
// "line severity rule: message".
func lint(t *testing.T, src string, opts *rules.Options) []string {
	t.Helper()
	objs, errs := manifest.Parse("test.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}
	if opts == nil {
		opts = rules.DefaultOptions()
	}
	eng := &rules.Engine{Checkers: []*rules.Checker{{Name: "cel", Prepare: prepare}}, Options: opts}
	res, err := eng.Run(objs, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var out []string
	for _, f := range res.Findings {
		out = append(out, fmt.Sprintf("%d %s %s: %s", f.Pos.Line, f.Severity, f.Rule, f.Message))
	}
	return out
}

func check(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestFiles runs each testdata file (modelled on the examples of the
// Kubernetes ValidatingAdmissionPolicy documentation, plus one file per
// matching knob) and compares every finding: line, severity, rule, message.
func TestFiles(t *testing.T) {
	for _, c := range fileCases {
		t.Run(c.name, func(t *testing.T) {
			if c.slow && testing.Short() {
				t.Skip("slow: run without -short")
			}
			want, ok := wantFindings[c.name]
			if !ok {
				t.Fatalf("no expectation for %s", c.name)
			}
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			check(t, lint(t, string(data), c.opts), want)
		})
	}
}
