package policies

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// The built-in policies' matchConditions are prefilters: cheap tests that
// let only objects that can fail a rule reach its validations. They must
// never hide a finding. prefilterVersions are the targets the tests judge
// at: the ones that change a rule's verdict or message.
var prefilterVersions = []string{"1.27", "1.28", "1.29", "1.33", "1.34", "1.35"}

// engines returns, for a target, the built-in policies as kiln lint runs
// them and the same policies without their matchConditions.
func prefilterEngines(t testing.TB, kv string) (with, without *cel.Engine) {
	t.Helper()
	v, err := manifest.ParseKubeVersion(kv)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Export(ExportOptions{KubeVersion: v, Actions: []admissionv1.ValidationAction{admissionv1.Deny}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	stripped := 0
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if spec, ok := m["spec"].(map[string]any); ok && m["kind"] == "ValidatingAdmissionPolicy" {
			if _, ok := spec["matchConditions"]; ok {
				delete(spec, "matchConditions")
				stripped++
			}
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	if stripped < 13 {
		t.Fatalf("only %d policies have matchConditions", stripped)
	}
	build := func(src string) *cel.Engine {
		objs, errs := manifest.Parse("policies.yaml", []byte(src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		e := cel.New(objs, objs, cel.Options{RuleID: func(n string) string { return n }})
		if s := e.Setup(); len(s) > 0 {
			t.Fatalf("%s: %s: %s", s[0].Rule, s[0].Field, s[0].Message)
		}
		return e
	}
	return build(string(data)), build(strings.Join(docs, "---\n"))
}

// prefilterFindings runs e and lists each finding as "object rule field: message".
func prefilterFindings(e *cel.Engine, objs []*manifest.Object) []string {
	var out []string
	for _, d := range e.Evaluate(objs) {
		out = append(out, fmt.Sprintf("%s %s %s %s: %s", d.Object.Pos(), d.Object.Ref(), d.Rule, d.Field, d.Message))
	}
	sort.Strings(out)
	return out
}

// TestPrefiltersHideNoFinding runs every built-in policy with and without
// its matchConditions over the rule fixtures, the examples and generated
// manifests, at each target version, and requires the same findings.
func TestPrefiltersHideNoFinding(t *testing.T) {
	var files []string
	for _, p := range []string{"sidecar", "jobset", "storage", "apiversions", "psa", "cel"} {
		m, _ := filepath.Glob("../" + p + "/testdata/*/*.yaml")
		files = append(files, m...)
		m, _ = filepath.Glob("../" + p + "/testdata/*.yaml")
		files = append(files, m...)
	}
	m, _ := filepath.Glob("../../examples/*/out/*/*.yaml")
	files = append(files, m...)
	m, _ = filepath.Glob("../../testdata/bad/*.yaml")
	files = append(files, m...)
	if dir := generatedCorpus(t, 1500); dir != "" {
		files = append(files, dir)
	}
	set := manifest.Read(files, nil)
	objs := set.Objects()
	if len(objs) < 300 {
		t.Fatalf("only %d objects", len(objs))
	}
	total := 0
	rulesSeen := map[string]bool{}
	for _, kv := range prefilterVersions {
		with, without := prefilterEngines(t, kv)
		got, want := prefilterFindings(with, objs), prefilterFindings(without, objs)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("target %s: matchConditions change the findings:\n%s", kv, diffLines(got, want))
		}
		total += len(want)
		for _, f := range want {
			rulesSeen[strings.Fields(f)[2]] = true
		}
	}
	// Every policy must have had findings for the comparison to mean something.
	for _, p := range loaded() {
		if !rulesSeen[p.Name] {
			t.Errorf("%s: no finding in the corpus at any target: the comparison says nothing about its prefilter", p.Name)
		}
	}
	t.Logf("%d objects, %d findings compared", len(objs), total)
}

// generatedCorpus writes n objects of ../shared/bench/gen-corpus to a
// temporary directory; in CI a missing generator or python3 fails the test.
func generatedCorpus(t *testing.T, n int) string {
	gen := "../../../shared/bench/gen-corpus"
	if _, err := os.Stat(gen); err != nil {
		gen = "/work/shared/bench/gen-corpus"
	}
	python, err := exec.LookPath("python3")
	if err == nil {
		_, err = os.Stat(gen)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("gen-corpus needs python3 and ../shared/bench/gen-corpus in CI: %v", err)
		}
		t.Logf("no generated corpus: %v", err)
		return ""
	}
	dir := t.TempDir()
	if b, err := exec.Command(python, gen, fmt.Sprint(n), dir).CombinedOutput(); err != nil {
		t.Fatalf("gen-corpus: %v\n%s", err, b)
	}
	return dir
}

func diffLines(got, want []string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, s := range got {
		g[s] = true
	}
	for _, s := range want {
		w[s] = true
	}
	var b strings.Builder
	for _, s := range want {
		if !g[s] {
			b.WriteString("- " + s + "\n")
		}
	}
	for _, s := range got {
		if !w[s] {
			b.WriteString("+ " + s + "\n")
		}
	}
	return b.String()
}

// FuzzPrefilters checks the same on arbitrary objects (seeded with the
// rule fixtures): a prefilter never hides a finding.
func FuzzPrefilters(f *testing.F) {
	for _, p := range []string{"sidecar", "jobset", "storage"} {
		m, _ := filepath.Glob("../" + p + "/testdata/*/*.yaml")
		for _, file := range m {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b, uint8(0))
			}
		}
	}
	type pair struct{ with, without *cel.Engine }
	engines := map[string]pair{}
	for _, kv := range prefilterVersions {
		w, wo := prefilterEngines(f, kv)
		engines[kv] = pair{w, wo}
	}
	f.Fuzz(func(t *testing.T, data []byte, version uint8) {
		objs, _ := manifest.Parse("fuzz.yaml", data)
		if len(objs) == 0 {
			return
		}
		kv := prefilterVersions[int(version)%len(prefilterVersions)]
		e := engines[kv]
		got, want := prefilterFindings(e.with, objs), prefilterFindings(e.without, objs)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("target %s: matchConditions change the findings:\n%s", kv, diffLines(got, want))
		}
	})
}
