package session

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/session/fix"
	"github.com/kilnhq/kiln/session/settings"
)

// fixCase is a tree kiln fix runs over in TestFixNeverWorse: its files
// by path, written to a temp directory, or a directory copied there.
type fixCase struct {
	name  string
	files map[string][]byte
	dir   string
}

// exampleFixCases are every rule's Fail example (with the settings its
// header names, as .kiln.yaml) and every rule fixture's fail.yaml.
func exampleFixCases(t *testing.T) []fixCase {
	all, err := Rules(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []fixCase
	for _, r := range all {
		if r.Fail == "" {
			continue
		}
		files := map[string][]byte{"fail.yaml": []byte(r.Fail)}
		if cfg := exampleConfig(report.ExampleFlags(r.Fail)); cfg != "" {
			files[".kiln.yaml"] = []byte(cfg)
		}
		out = append(out, fixCase{name: "example/" + r.ID, files: files})
	}
	fixtures, err := filepath.Glob("../rules/*/testdata/*/fail.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range fixtures {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fixCase{name: "fixture/" + strings.TrimPrefix(filepath.ToSlash(p), "../rules/"), files: map[string][]byte{"fail.yaml": data}})
	}
	return out
}

// exampleConfig is the .kiln.yaml of an example's flags (--kube-version,
// --psa-level, --psa-version), "" for none.
func exampleConfig(flags []string) string {
	var top, psa []string
	for i := 0; i+1 < len(flags); i += 2 {
		switch flags[i] {
		case "--kube-version":
			top = append(top, "kubeVersion: "+flags[i+1])
		case "--psa-level":
			psa = append(psa, "  level: "+flags[i+1])
		case "--psa-version":
			psa = append(psa, "  version: "+flags[i+1])
		}
	}
	if len(psa) > 0 {
		top = append(top, "psa:\n"+strings.Join(psa, "\n"))
	}
	if len(top) == 0 {
		return ""
	}
	return strings.Join(top, "\n") + "\n"
}

// sharedFixCases are the projects of ../shared/realworld and
// ../shared/gitops, when present.
func sharedFixCases() []fixCase {
	var out []fixCase
	for _, set := range []string{"realworld", "gitops"} {
		root := filepath.Join("..", "..", "shared", set)
		projects, _ := os.ReadDir(root)
		for _, p := range projects {
			if p.IsDir() {
				out = append(out, fixCase{name: set + "/" + p.Name(), dir: filepath.Join(root, p.Name())})
			}
		}
	}
	return out
}

// copyWithLinks copies the regular files of src into dst (symlinks as links).
func copyWithLinks(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, to)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lintHere lints "." as kiln lint does and counts its active findings.
func lintHere(t *testing.T) (fix.Counted, *rules.Result) {
	t.Helper()
	g := settings.New()
	s, err := New(g, []string{"."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Lint([]string{"."}, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := fix.CountFindings(l.Result)
	if err != nil {
		t.Fatal(err)
	}
	return c, l.Result
}

// TestFixNeverWorse is kiln fix's property: over every rule's failing
// example and fixture and a copy of every project of ../shared (when
// present), kiln fix writes its repairs and kiln lint of the result finds
// nothing it did not find before, ever. It logs what it did: the cases,
// the repairs made, the repairs refused (each would have made a new
// finding) and the findings before and after.
func TestFixNeverWorse(t *testing.T) {
	cases := exampleFixCases(t)
	if !testing.Short() {
		cases = append(cases, sharedFixCases()...)
	}
	var total struct{ cases, fixed, fixes, files, refused, before, after, news int }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.dir != "" {
				copyWithLinks(t, c.dir, dir)
			}
			for p, data := range c.files {
				if err := os.WriteFile(filepath.Join(dir, p), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			before, _ := lintHere(t)
			s, err := New(settings.New(), []string{"."}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var info bytes.Buffer
			out, err := s.Fix([]string{"."}, FixOptions{Diff: io.Discard, Info: &info})
			if err != nil {
				t.Fatal(err)
			}
			_, res := lintHere(t)
			news, err := fix.NewFindings(before, res)
			if err != nil {
				t.Fatal(err)
			}
			total.news += len(news)
			for _, f := range news {
				t.Errorf("new finding after kiln fix: %s %s %s: %s\nkiln fix said:\n%s", f.Pos, f.Rule, f.Object, f.Message, info.String())
			}
			refused := strings.Count(info.String(), ": not repaired: ")
			n := 0
			for _, k := range before {
				n += k
			}
			left := res.Summary.Errors + res.Summary.Warnings + res.Summary.Infos
			total.cases++
			total.fixes += out.Fixes
			total.files += out.Files
			total.refused += refused
			total.before += n
			total.after += left
			if out.Fixes > 0 {
				total.fixed++
				t.Logf("%d repairs in %d files, %d refused; findings %d → %d", out.Fixes, out.Files, refused, n, left)
			}
		})
	}
	t.Logf("%d cases (%d repaired): %d repairs in %d files, %d refused; findings %d before, %d after, %d new",
		total.cases, total.fixed, total.fixes, total.files, total.refused, total.before, total.after, total.news)
	if total.fixes == 0 {
		t.Error("kiln fix repaired nothing: the property was not exercised")
	}
}
