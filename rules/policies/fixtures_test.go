package policies

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
)

// TestFindingsGolden runs the policies over every fixture of kiln's own
// rule packages and the compiled examples, at the fixture's version and at
// each version that changes a rule's verdict or message, and compares every
// finding (version, position, rule, severity, field, message) with
// testdata/findings.golden. The golden was first checked against the Go
// implementations the policies replaced: same lines, fields and messages.
func TestFindingsGolden(t *testing.T) {
	var files []string
	for _, p := range []string{"sidecar", "jobset", "storage", "apiversions"} {
		m, _ := filepath.Glob("../" + p + "/testdata/*/*.yaml")
		files = append(files, m...)
	}
	m, _ := filepath.Glob("../../examples/*/out/*/*.yaml")
	files = append(files, m...)
	sort.Strings(files)
	if len(files) < 50 {
		t.Fatalf("only %d fixture files", len(files))
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range []string{"", "1.27", "1.28", "1.29", "1.33", "1.34", "1.35"} {
			opts := ruletest.Options(t, data)
			if kv != "" {
				opts.KubeVersion, _ = manifest.ParseKubeVersion(kv)
			}
			res := ruletest.Run(t, f, data, opts, Checker)
			for _, x := range res.Findings {
				out = append(out, fmt.Sprintf("%s %s:%d:%d %s %s [%s] %s", opts.KubeVersion, x.Pos.File, x.Pos.Line, x.Pos.Column, x.Rule, x.Severity, x.Field, x.Message))
			}
		}
	}
	golden.Check(t, "testdata/findings.golden", []byte(strings.Join(out, "\n")+"\n"))
}
