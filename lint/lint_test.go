package lint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// onePass is the reference: every object read and decoded, App specs
// compiled, then the engine over the whole slice (every object context).
func onePass(t *testing.T, files []string, units []*discover.Unit, stdin string) *rules.Result {
	t.Helper()
	set := manifest.ReadFiles(files, strings.NewReader(stdin))
	for _, u := range units {
		set.Sources = append(set.Sources, u.Source)
	}
	var objs, specs []*manifest.Object
	for _, o := range set.Objects() {
		if compiler.IsSpec(o) {
			specs = append(specs, o)
		}
	}
	results, _ := compiler.CompileAll(specs)
	next := 0
	for _, o := range set.Objects() {
		if compiler.IsSpec(o) {
			objs = append(objs, results[next]...)
			next++
			continue
		}
		objs = append(objs, o)
	}
	res, err := lint.Judge(&rules.Engine{Checkers: checkers.All()}, objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func describe(res *rules.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d objects, %d errors, %d warnings, %d infos, %d suppressed\n", res.Summary.Objects,
		res.Summary.Errors, res.Summary.Warnings, res.Summary.Infos, res.Summary.Suppressed)
	err := res.Each(func(f rules.Finding) error {
		fmt.Fprintf(&b, "%s %s %s %s %s %q", f.Pos, f.Severity, f.Rule, f.Object, f.Field, f.Message)
		if f.Suppressed != nil {
			fmt.Fprintf(&b, " suppressed(%s)", f.Suppressed.Reason)
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		fmt.Fprintf(&b, "reading the findings: %v\n", err)
	}
	return b.String()
}

func expand(t *testing.T, paths ...string) []string {
	t.Helper()
	files, errs := manifest.Expand(paths)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return files
}

// TestSameAsOnePass: the two-pass lint finds what a run over every object
// at once finds, byte for byte, also when the context of a file (its
// Namespace's Pod Security labels, the policy and the param that judge it,
// the first copy of a duplicate, the claim a workload shares) is in files
// read after it.
func TestSameAsOnePass(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		stdin string
	}{
		{"context in later files", expand(t, "testdata/context"), ""},
		{"context on stdin", append(expand(t, "testdata/context/a-workloads.yaml", "testdata/context/b-copy.yaml"), manifest.Stdin),
			mustRead(t, "testdata/context/z-context.yaml") + "---\n" + mustRead(t, "testdata/context/y-policy.yaml")},
		{"conformance corpus", expand(t, "../admit/conformance/testdata/corpus"), ""},
		{"App specs", expand(t, "../examples/pytorch", "../examples/mesh"), ""},
		{"rule examples", expand(t, "../rules/psa/testdata", "../rules/storage/testdata", "../rules/duplicate/testdata"), ""},
	}
	cases = append(cases, struct {
		name  string
		files []string
		stdin string
	}{"a file of many parts", []string{manyParts(t)}, ""})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := describe(onePass(t, tc.files, nil, tc.stdin))
			// The reference has no catalog CRDs (TestCatalog judges those).
			opts := rules.DefaultOptions()
			opts.CatalogOff = true
			out, err := lint.Run(&rules.Engine{Checkers: checkers.All(), Options: opts}, lint.Input{Files: tc.files, Stdin: strings.NewReader(tc.stdin)}, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(out.Result); got != want {
				t.Errorf("two passes:\n%s\none pass:\n%s", got, want)
			}
			if !strings.Contains(want, " error ") && tc.name == "context in later files" {
				t.Errorf("the fixture should have errors:\n%s", want)
			}
			if len(out.Result.Files) != len(tc.files) {
				t.Errorf("%d files in the result, want %d", len(out.Result.Files), len(tc.files))
			}
		})
	}
}

// manyParts writes a file that lint.Run judges in several parts: 700
// objects with findings throughout, an App spec that compiles to several
// objects in a later part, and copies of objects of the first part in the
// last (object/duplicate finds them again by their place in the file).
func manyParts(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < 700; i++ {
		switch {
		case i == 300:
			b.WriteString(mustRead(t, "../examples/mesh/app.yaml"))
		case i >= 650:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: shop}\ndata: {k: copy}\n", i-650)
		case i%7 == 0:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: pod-%03d, namespace: shop}\nspec:\n  containers: [{name: c, image: nginx, securityContext: {privileged: true}}]\n", i)
		default:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: shop}\ndata: {k: v%d}\n", i, i)
		}
		b.WriteString("---\n")
	}
	path := filepath.Join(t.TempDir(), "bundle.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestContextDecides: the fixture's verdicts depend on the later files, so
// a lint that judged each file without the first pass would differ.
func TestContextDecides(t *testing.T) {
	out, err := lint.Run(&rules.Engine{Checkers: checkers.All()}, lint.Input{Files: expand(t, "testdata/context")}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := describe(out.Result)
	for _, want := range []string{
		// strict's enforce-version label is invalid: restricted/latest.
		"a-workloads.yaml:22:9 error psa/runAsNonRoot Deployment/strict/web",
		// the binding's param is in z-context.yaml.
		`policy/allowed-registries Deployment/strict/web  "ValidatingAdmissionPolicy 'allowed-registries' with binding 'allowed-registries' denied request: images must come from registry.example.com/"`,
		"b-copy.yaml:3:12 warning object/duplicate ConfigMap/strict/settings metadata.name",
		"c-claims.yaml:23:17 warning storage/rwo-shared Deployment/strict/writer spec.template.spec.volumes[0]",
		"c-claims.yaml:25:1 info schema/no-crd Widget/strict/w apiVersion",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Deployment/relaxed/web spec.template.spec.containers[0].securityContext.privileged") {
		t.Errorf("relaxed is a privileged Namespace, its Deployment may be privileged:\n%s", got)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestRepoContext: linting one file with the rest of the repository as
// context (what pre-commit's staged-files run gets) gives that file's
// findings of a whole-tree run, and nothing on the context files; except
// the rules that relate judged objects to each other (a duplicate or a
// shared claim in a file not linted is not seen: context is the kinds
// checkers prepare with, not every object).
func TestRepoContext(t *testing.T) {
	all := expand(t, "testdata/context")
	whole, err := lint.Run(&rules.Engine{Checkers: checkers.All()}, lint.Input{Files: all}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range all {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var others []string
			for _, f := range all {
				if f != file {
					others = append(others, f)
				}
			}
			one, err := lint.Run(&rules.Engine{Checkers: checkers.All()}, lint.Input{Files: []string{file}, Context: others}, false)
			if err != nil {
				t.Fatal(err)
			}
			want := whole.Result.Keep(func(f rules.Finding) bool {
				return f.Pos.File == file && f.Rule != "object/duplicate"
			})
			want.Summary.Objects = one.Result.Summary.Objects
			if got, w := describe(one.Result), describe(want); got != w {
				t.Errorf("with the repository as context:\n%s\nwhole tree, this file:\n%s", got, w)
			}
		})
	}
}

// TestPolicyReadOnce: a --policy directory under the linted tree is read
// once, so its policy is neither reported as defined twice nor applied twice.
func TestPolicyReadOnce(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policies")
	if err := os.MkdirAll(pol, 0o755); err != nil {
		t.Fatal(err)
	}
	policy := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-bad}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  validations: [{expression: "object.metadata.name != 'bad'", message: no bad}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-bad}
spec: {policyName: no-bad, validationActions: [Deny]}
`
	files := map[string]string{filepath.Join(pol, "p.yaml"): policy, filepath.Join(dir, "cm.yaml"): "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: x}\n"}
	for p, text := range files {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inputs, _ := manifest.Expand([]string{dir})
	for _, policies := range [][]string{{pol}, {filepath.Join(pol, "p.yaml")}} {
		opts := rules.DefaultOptions()
		opts.Policies = policies
		out, err := lint.Run(&rules.Engine{Checkers: checkers.All(), Options: opts}, lint.Input{Files: inputs}, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range out.Result.Findings {
			got = append(got, filepath.Base(f.Pos.File)+" "+f.Rule)
		}
		if strings.Join(got, ",") != "cm.yaml policy/no-bad" {
			t.Errorf("--policy %v: findings %v, want the one denial", policies, got)
		}
	}
}

// TestSpilledReports: findings spilled to a temp file a few at a time
// (Input.SpillAfter) make every report byte for byte what the same
// findings in memory make, also for a result Keep filtered, and the temp
// file is gone after Close.
func TestSpilledReports(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	files := expand(t, "testdata/context", "../admit/conformance/testdata/corpus", "../rules/psa/testdata", "../rules/duplicate/testdata")
	reports := func(spill int, keep bool) map[string]string {
		t.Helper()
		out, err := lint.Run(&rules.Engine{Checkers: checkers.All()}, lint.Input{Files: files, SpillAfter: spill}, true)
		if err != nil {
			t.Fatal(err)
		}
		res := out.Result
		defer res.Close()
		if spill > 0 && spill < 10 && res.Findings != nil {
			t.Errorf("spill after %d: the findings are in memory", spill)
		}
		if keep {
			res = res.Keep(func(f rules.Finding) bool { return !strings.HasSuffix(f.Pos.File, "fail.yaml") })
		}
		got := map[string]string{}
		for _, format := range report.Formats {
			var b strings.Builder
			if err := report.Write(&b, format, res, report.Options{ShowSuppressed: true, ToolVersion: "test"}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			got[format] = b.String()
		}
		return got
	}
	for _, keep := range []bool{false, true} {
		want := reports(-1, keep)
		if n := strings.Count(want["github"], "\n"); n < 20 {
			t.Fatalf("only %d findings: too few to spill in several runs", n)
		}
		for _, spill := range []int{1, 7, 1000000} {
			got := reports(spill, keep)
			for _, format := range report.Formats {
				if got[format] != want[format] {
					t.Errorf("keep=%v, spilled after %d: the %s report differs from the one in memory", keep, spill, format)
				}
			}
		}
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// TestContextLetGo: once every checker has prepared, the first pass's
// copies of the context Namespaces are no longer reachable (what the
// checkers need of them, they keep as summaries), so a repository with
// thousands of Namespaces does not hold them all while it is judged. The
// run has users' policies (--policy), whose engine indexes the Namespaces,
// and every registered checker. A probe checker takes weak pointers to the
// copies it is given and, while the last file is judged, collects and
// checks that none is left.
func TestContextLetGo(t *testing.T) {
	dir := t.TempDir()
	for f := 0; f < 3; f++ {
		var b strings.Builder
		for i := 0; i < 20; i++ {
			ns := fmt.Sprintf("team-%d-%d", f, i)
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {pod-security.kubernetes.io/enforce: baseline}\n---\n", ns)
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: %s}\nspec:\n  containers: [{name: c, image: nginx, securityContext: {privileged: true}}]\n---\n", ns)
		}
		if f == 2 {
			b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe-last, namespace: team-2-0}\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.yaml", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var (
		copies  []weak.Pointer[manifest.Object]
		checked atomic.Bool
		left    atomic.Int64
	)
	probe := &rules.Checker{Name: "probe", Requires: []rules.Context{rules.Namespaces}, Prepare: func(p *rules.Pass) (rules.Judge, error) {
		for _, o := range p.Objects {
			if o.ReadAhead && o.Kind == "Namespace" {
				copies = append(copies, weak.Make(o))
			}
		}
		return func(o *manifest.Object) {
			if o.Name != "probe-last" {
				return
			}
			runtime.GC()
			for _, c := range copies {
				if c.Value() != nil {
					left.Add(1)
				}
			}
			checked.Store(true)
		}, nil
	}}
	opts := rules.DefaultOptions()
	opts.Policies = []string{"../bench/policies"}
	eng := &rules.Engine{Checkers: append(checkers.All(), probe), Options: opts}
	out, err := lint.Run(eng, lint.Input{Files: expand(t, dir)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(copies) != 60 || !checked.Load() {
		t.Fatalf("the probe saw %d Namespace copies (want 60) and checked: %v", len(copies), checked.Load())
	}
	if n := left.Load(); n > 0 {
		t.Errorf("%d of the 60 Namespace copies are still reachable while the last file is judged", n)
	}
	// The Namespaces still decide: baseline forbids the privileged Pods.
	if got := describe(out.Result); strings.Count(got, "psa/privileged") != 60 {
		t.Errorf("want 60 psa/privileged findings:\n%s", got)
	}
}

// TestSkippedFiles: files that are not Kubernetes are counted as skipped
// with their reason and never fail the run; a manifest that does not parse
// stays an input error.
func TestSkippedFiles(t *testing.T) {
	dir := "testdata/skipped"
	files := expand(t, dir)
	out, err := lint.Run(&rules.Engine{Checkers: checkers.All()}, lint.Input{Files: files}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Result.Close()
	got := map[string]string{}
	for _, s := range out.Skipped {
		got[filepath.ToSlash(s.Pos.File)] = s.Reason
	}
	for _, e := range out.Errs {
		got[filepath.ToSlash(e.(*manifest.Error).Pos.File)] = "error: " + e.Error()
	}
	tests := []struct{ file, want string }{
		{"samples/seed.yaml", manifest.NotKubernetesReason},
		{"values.yaml", "no apiVersion or kind (not a Kubernetes object)"},
		{"template.yaml", "a template ({{ }} syntax), not a manifest: lint the chart or the rendered output"},
		{"broken.yaml", "error: " + dir + "/broken.yaml:7:1: invalid YAML"},
		{"good.yaml", ""},
	}
	for _, tt := range tests {
		if g := got[dir+"/"+tt.file]; !strings.HasPrefix(g, tt.want) || (tt.want == "") != (g == "") {
			t.Errorf("%s: %q, want %q", tt.file, g, tt.want)
		}
	}
	if out.Result.Summary.Objects != 1 {
		t.Errorf("%d objects, want good.yaml's one", out.Result.Summary.Objects)
	}
}
