package fix

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	kilnlint "github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// readDir reads every manifest file under dir, in lexical order.
func readDir(t testing.TB, dir string) []*File {
	t.Helper()
	paths, errs := manifest.Expand([]string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var files []*File
	for _, p := range paths {
		files = append(files, ReadFile(p))
	}
	return files
}

// lint runs every checker over the files (with out's content when given)
// for the latest Kubernetes.
func lint(t testing.TB, files []*File, out map[string][]byte) *rules.Result {
	return lintFor(t, manifest.LatestKube, files, out)
}

// lintFor is lint for a target Kubernetes version.
func lintFor(t testing.TB, kube manifest.KubeVersion, files []*File, out map[string][]byte) *rules.Result {
	t.Helper()
	var objs []*manifest.Object
	for _, f := range files {
		fobjs := f.Objects
		if b, ok := out[f.Path]; ok {
			var errs []error
			fobjs, errs = manifest.Parse(f.Path, b)
			if len(errs) > 0 {
				t.Fatalf("fixed %s does not parse: %v", f.Path, errs)
			}
		}
		objs = append(objs, fobjs...)
	}
	opts := rules.DefaultOptions()
	opts.KubeVersion = kube
	res, err := kilnlint.Judge(&rules.Engine{Checkers: checkers.All(), Options: opts}, objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fixDir fixes a directory's files in memory, for the latest Kubernetes,
// and returns the results and new contents.
func fixDir(t testing.TB, dir string, opts Options) ([]*File, []*Result, map[string][]byte) {
	return fixDirFor(t, manifest.LatestKube, dir, opts)
}

// fixDirFor is fixDir for a target Kubernetes version.
func fixDirFor(t testing.TB, kube manifest.KubeVersion, dir string, opts Options) ([]*File, []*Result, map[string][]byte) {
	t.Helper()
	files := readDir(t, dir)
	results := Fix(files, lintFor(t, kube, files, nil).Findings, opts)
	out := map[string][]byte{}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.File.Path, r.Err)
		}
		if r.Changed() {
			out[r.File.Path] = r.Output
		}
	}
	return files, results, out
}

// assertNothingFixableLeft checks that a second lint finds nothing kiln fix
// would still change, and that fixing again changes nothing.
func assertNothingFixableLeft(t *testing.T, files []*File, out map[string][]byte) {
	t.Helper()
	res := lint(t, files, out)
	for _, f := range res.Active() {
		if f.Fix == nil {
			continue // nothing kiln fix would do (e.g. a removed version left to a person)
		}
		t.Errorf("fixable finding left after kiln fix: %s %s %s: %s", f.Pos, f.Rule, f.Object, f.Message)
	}
	// A second run over the fixed content changes nothing.
	var again []*File
	for _, f := range files {
		src := f.Src
		if b, ok := out[f.Path]; ok {
			src = b
		}
		objs, errs := manifest.Parse(f.Path, src)
		again = append(again, &File{Path: f.Path, Src: src, Objects: objs, Errs: errs})
	}
	for _, r := range Fix(again, res.Findings, Options{}) {
		if r.Changed() {
			t.Errorf("%s: a second kiln fix changed it again:\n%s", r.File.Path, UnifiedDiff(r.File.Path, r.File.Src, r.Output))
		}
	}
}

func TestFixCorpus(t *testing.T) {
	files, results, out := fixDir(t, "testdata/in", Options{})
	var changes strings.Builder
	for _, r := range results {
		name := filepath.Base(r.File.Path)
		if len(r.File.Errs) > 0 {
			if r.Changed() {
				t.Errorf("%s has a parse error but was changed", name)
			}
			continue
		}
		golden.Check(t, filepath.Join("testdata/out", name), r.Output)
		for _, c := range r.Changes {
			fmt.Fprintf(&changes, "%s: %s: %s: %s\n", c.Pos, c.Rule, c.Object, c.Message)
		}
		if len(r.Reformatted) > 0 {
			t.Errorf("%s: documents %v were re-encoded whole; the corpus should patch in place", name, r.Reformatted)
		}
	}
	golden.Check(t, "testdata/out/changes.golden", []byte(changes.String()))
	assertNothingFixableLeft(t, files, out)
}

// TestUntouchedBytes asserts that documents without a change are
// byte-identical and that every comment of the input is still there.
func TestUntouchedBytes(t *testing.T) {
	_, results, _ := fixDir(t, "testdata/in", Options{})
	for _, r := range results {
		if !r.Changed() {
			continue
		}
		changedLines := map[int]bool{}
		for _, c := range r.Changes {
			changedLines[c.Pos.Line] = true
		}
		before, after := splitDocs(string(r.File.Src)), splitDocs(string(r.Output))
		if len(before) != len(after) {
			t.Fatalf("%s: %d documents became %d", r.File.Path, len(before), len(after))
		}
		line := 1
		for i, doc := range before {
			touched := false
			for l := line; l < line+strings.Count(doc, "\n")+1; l++ {
				touched = touched || changedLines[l]
			}
			if !touched && doc != after[i] {
				t.Errorf("%s: document %d has no fix but changed:\n%s", r.File.Path, i+1, UnifiedDiff(r.File.Path, []byte(doc), []byte(after[i])))
			}
			line += strings.Count(doc, "\n")
		}
		if got, want := comments(string(r.Output)), comments(string(r.File.Src)); !containsAll(got, want) {
			t.Errorf("%s: comments lost:\nbefore %q\nafter  %q", r.File.Path, want, got)
		}
	}
}

// splitDocs splits a stream at its "---" lines, keeping them.
func splitDocs(s string) []string {
	parts := regexp.MustCompile(`(?m)^---$`).Split(s, -1)
	for i := 1; i < len(parts); i++ {
		parts[i] = "---" + parts[i]
	}
	return parts
}

var commentRE = regexp.MustCompile(`(?m)(?:^|\s)(#.*)$`)

// comments returns every comment's text, sorted.
func comments(s string) []string {
	var out []string
	for _, m := range commentRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}

func containsAll(have, want []string) bool {
	n := map[string]int{}
	for _, h := range have {
		n[h]++
	}
	for _, w := range want {
		if n[w] == 0 {
			return false
		}
		n[w]--
	}
	return true
}

// Rule IDs of the findings kiln fix repairs, as the tests name them.
const (
	RunAsNonRoot         = "psa/runAsNonRoot"
	SeccompRestricted    = "psa/seccompProfile_restricted"
	SeccompBaseline      = "psa/seccompProfile_baseline"
	AllowPrivEscalation  = "psa/allowPrivilegeEscalation"
	CapabilitiesRestrict = "psa/capabilities_restricted"
	CapabilitiesBaseline = "psa/capabilities_baseline"
	SidecarClassicInJob  = "sidecar/classic-in-job"
	APIRemoved           = "api/removed"
)

func TestRuleFilter(t *testing.T) {
	for _, tc := range []struct {
		only []string
		want []string // the rules that made changes
	}{
		{[]string{APIRemoved}, []string{APIRemoved}},
		{[]string{SidecarClassicInJob}, []string{SidecarClassicInJob}},
		{[]string{"psa/seccomp*"}, []string{SeccompBaseline, SeccompRestricted}},
		{[]string{RunAsNonRoot, APIRemoved}, []string{APIRemoved, RunAsNonRoot}},
		{nil, []string{APIRemoved, AllowPrivEscalation, CapabilitiesBaseline, CapabilitiesRestrict, RunAsNonRoot, SeccompBaseline, SeccompRestricted, SidecarClassicInJob}},
	} {
		t.Run(strings.Join(tc.only, ","), func(t *testing.T) {
			_, results, _ := fixDir(t, "testdata/in", Options{Only: tc.only})
			seen := map[string]bool{}
			for _, r := range results {
				for _, c := range r.Changes {
					seen[c.Rule] = true
				}
			}
			var got []string
			for id := range seen {
				got = append(got, id)
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("rules that changed something: %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSidecarNeeds129(t *testing.T) {
	_, results, _ := fixDirFor(t, manifest.KubeVersion{Major: 1, Minor: 28}, "testdata/in", Options{Only: []string{SidecarClassicInJob}})
	for _, r := range results {
		if r.Changed() {
			t.Errorf("%s: native sidecars made for Kubernetes 1.28:\n%s", r.File.Path, UnifiedDiff(r.File.Path, r.File.Src, r.Output))
		}
	}
}

// TestGeneratedCorpus runs kiln fix on gen-corpus output: afterwards no
// fixable finding is left and a second run changes nothing.
func TestGeneratedCorpus(t *testing.T) {
	gen := "../../../shared/bench/gen-corpus"
	if _, err := os.Stat(gen); err != nil {
		gen = "/work/shared/bench/gen-corpus"
	}
	if testing.Short() {
		t.Skip("-short")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 or gen-corpus missing in CI: %v", err)
		}
		t.Skip("python3 not found")
	}
	if _, err := os.Stat(gen); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("gen-corpus missing in CI: %v", err)
		}
		t.Skip("gen-corpus not found")
	}
	dir := t.TempDir()
	if b, err := exec.Command(python, gen, "500", dir).CombinedOutput(); err != nil {
		t.Fatalf("gen-corpus: %v\n%s", err, b)
	}
	files, results, out := fixDir(t, dir, Options{})
	n := 0
	for _, r := range results {
		n += len(r.Changes)
		if len(r.Reformatted) > 0 {
			t.Errorf("%s: documents %v re-encoded whole", r.File.Path, r.Reformatted)
		}
	}
	if n == 0 {
		t.Fatal("kiln fix changed nothing in the generated corpus")
	}
	assertNothingFixableLeft(t, files, out)
}

// BenchmarkFix measures lint-free fixing (Fix and the text patches) of the hand-written corpus.
func BenchmarkFix(b *testing.B) {
	files := readDir(b, "testdata/in")
	findings := lint(b, files, nil).Findings
	opts := Options{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fresh := make([]*File, len(files))
		for k, f := range files {
			objs, errs := manifest.Parse(f.Path, f.Src)
			fresh[k] = &File{Path: f.Path, Src: f.Src, Objects: objs, Errs: errs}
		}
		b.StartTimer()
		Fix(fresh, findings, opts)
	}
}

// TestRunAsNonRootCautions: setting runAsNonRoot on a pod that names no
// user is a caution per object (its image may run as root); with RunAsUser
// the pod gets that user instead and no caution; a pod that names its user
// gets neither.
func TestRunAsNonRootCautions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		uid      int64
		cautions []string // objects with a caution
		wantUser string   // a line the fixed db Deployment must hold
	}{
		{"no user", 0, []string{"Deployment/shop/db"}, ""},
		{"--run-as-user 1000", 1000, nil, "runAsUser: 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, results, out := fixDir(t, "testdata/cautions", Options{RunAsUser: tc.uid})
			var got []string
			for _, r := range results {
				for _, c := range r.Cautions {
					got = append(got, c.Object.String())
					if c.Rule != RunAsNonRoot || !strings.Contains(c.Message, `container "postgres"`) || !strings.Contains(c.Message, "--run-as-user") {
						t.Errorf("caution %s: %s", c.Rule, c.Message)
					}
				}
				for _, c := range r.Changes {
					if c.Object.Name == "web" && strings.Contains(c.Message, "runAsUser") {
						t.Errorf("web names its user but got %s", c.Message)
					}
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.cautions, ",") {
				t.Errorf("cautions on %q, want %q", got, tc.cautions)
			}
			fixed := string(out[filepath.Join("testdata", "cautions", "pods.yaml")])
			if !strings.Contains(fixed, "runAsNonRoot: true") {
				t.Fatalf("runAsNonRoot not set:\n%s", fixed)
			}
			if tc.wantUser != "" && strings.Count(fixed, tc.wantUser) != 1 {
				t.Errorf("want %q once in:\n%s", tc.wantUser, fixed)
			}
			if tc.wantUser == "" && strings.Contains(fixed, "runAsUser: 1000") {
				t.Errorf("runAsUser set without --run-as-user:\n%s", fixed)
			}
		})
	}
}

// TestRulePatterns: --rule takes the pattern syntax of .kiln.yaml and
// kiln.dev/ignore (an ID, or a prefix ending in *), nothing else.
func TestRulePatterns(t *testing.T) {
	ids := []string{"psa/runAsNonRoot", "psa/seccompProfile_restricted", "sidecar/classic-in-job"}
	for pattern, want := range map[string]bool{
		"psa/runAsNonRoot": true, "psa/*": true, "psa/run*": true, "*": true, "sidecar/*": true,
		"psa/*Root": false, "psa/?unAsNonRoot": false, "api/*": false, "psa/runAsNonRoo": false,
	} {
		if got := MatchesAnyRule(pattern, ids); got != want {
			t.Errorf("MatchesAnyRule(%q) = %v, want %v", pattern, got, want)
		}
	}
}
