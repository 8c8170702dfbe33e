package session

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/session/fix"
	"github.com/kilnhq/kiln/session/settings"
)

// copyTree copies testdata/fix/<name> into a temp directory, makes it the
// current directory, and returns the files' contents by path.
func copyTree(t *testing.T, name string) map[string]string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "fix", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{}
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(src), p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = string(data)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return files
}

// runFix runs kiln fix over path with the given settings and returns the
// outcome, the diff and what it said.
func runFix(t *testing.T, path string, dryRun bool, given ...settings.Assignment) (out *fix.Outcome, diff, info string) {
	t.Helper()
	g := settings.New()
	for _, a := range given {
		if err := g.Apply(a); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(g, []string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var d, i bytes.Buffer
	out, err = s.Fix([]string{path}, FixOptions{DryRun: dryRun, Diff: &d, Info: &i})
	if err != nil {
		t.Fatal(err)
	}
	return out, d.String(), i.String()
}

func remaining(t *testing.T, res *rules.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Write(&b, "text", res, report.Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFixGolden: kiln fix --dry-run on a kustomize tree (two overlays of a
// base, one with a namePrefix and a patch that adds a container) edits the
// base's documents, never the patch, and says what the patch adds is left;
// on a Helm chart it edits nothing and names the chart values to set.
func TestFixGolden(t *testing.T) {
	for _, name := range []string{"kustomize", "chart"} {
		t.Run(name, func(t *testing.T) {
			file, err := filepath.Abs(filepath.Join("testdata", "fix", name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			copyTree(t, name)
			out, diff, info := runFix(t, name, true)
			golden.Check(t, file, fmt.Appendf(nil, "== diff\n%s== info\n%s== remaining\n%s", diff, info, remaining(t, out.Remaining)))
		})
	}
}

// TestFixKustomizeWrites: the repairs land in the base's resource files,
// the patch keeps its bytes, and what remains after writing is what the
// dry run said would remain (it judged its edits through kustomize), the
// dry run at the positions of the files as they were.
func TestFixKustomizeWrites(t *testing.T) {
	before := copyTree(t, "kustomize")
	linted, err := New(settings.New(), []string{"kustomize"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := linted.Lint([]string{"kustomize"}, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]bool{} // the findings' positions before fixing
	for _, f := range l.Result.Findings {
		at[f.Pos.String()] = true
	}
	dry, _, _ := runFix(t, "kustomize", true)
	for _, f := range dry.Remaining.Findings {
		if !at[f.Pos.String()] {
			t.Errorf("the dry run puts %s %s at %s, where no finding was before fixing", f.Rule, f.Object, f.Pos)
		}
	}
	for p, data := range before {
		if got, _ := os.ReadFile(p); string(got) != data {
			t.Errorf("--dry-run changed %s", p)
		}
	}
	out, _, info := runFix(t, "kustomize", false)
	for p, data := range before {
		got, _ := os.ReadFile(p)
		changed := string(got) != data
		if want := strings.HasPrefix(p, "kustomize/base/") && strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, "kustomization.yaml"); changed != want {
			t.Errorf("%s changed: %v, want %v", p, changed, want)
		}
	}
	if out.Fixes != 5 || out.Files != 2 {
		t.Errorf("fixed %d problems in %d files, want 5 in 2:\n%s", out.Fixes, out.Files, info)
	}
	r, _ := fix.CountFindings(out.Remaining)
	d, _ := fix.CountFindings(dry.Remaining)
	if !maps.Equal(r, d) {
		t.Errorf("remaining after writing:\n%s\nremaining the dry run said:\n%s", remaining(t, out.Remaining), remaining(t, dry.Remaining))
	}
	if out.Remaining.Summary.Errors != 1 {
		t.Errorf("want the one finding the patch's container keeps:\n%s", remaining(t, out.Remaining))
	}
}

// TestFixHelmValues: kiln fix renders a chart with --set, as kiln lint does:
// with the values set that the advice names, nothing remains.
func TestFixHelmValues(t *testing.T) {
	copyTree(t, "chart")
	out, diff, _ := runFix(t, "chart", true, settings.Assignment{Key: "helm.set", From: "--set", Value: settings.List([]string{
		"securityContext.allowPrivilegeEscalation=false", "securityContext.capabilities.drop={ALL}",
		"podSecurityContext.runAsNonRoot=true", "podSecurityContext.seccompProfile.type=RuntimeDefault"})})
	if diff != "" || out.Remaining.Summary.Errors != 0 || out.Remaining.Summary.Objects != 1 {
		t.Errorf("diff %q; remaining:\n%s", diff, remaining(t, out.Remaining))
	}
}

// TestFixSeesWhatLintSees: the judgement kiln fix repairs from is kiln
// lint's: the same findings on the same objects (the patches unjudged),
// in as many files and objects.
func TestFixSeesWhatLintSees(t *testing.T) {
	copyTree(t, "kustomize")
	s, err := New(settings.New(), []string{"kustomize"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	linted, err := s.Lint([]string{"kustomize"}, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.judgeForFix([]string{"kustomize"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	list := func(res *rules.Result) string {
		s := fmt.Sprintf("%d files, %d objects\n", res.Summary.Files, res.Summary.Objects)
		for _, f := range res.Findings {
			s += fmt.Sprintf("%s %s %s %s\n", f.Pos, f.Rule, f.Object, f.Message)
		}
		return s
	}
	if l, f := list(linted.Result), list(j.Result); l != f {
		t.Errorf("kiln lint:\n%s\nkiln fix judged:\n%s", l, f)
	}
}
