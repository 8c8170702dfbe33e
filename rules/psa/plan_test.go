package psa

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

const planInput = "testdata/plan/input.yaml"

func readPlanInput(t *testing.T) []*manifest.Object {
	t.Helper()
	data, err := os.ReadFile(planInput)
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := manifest.Parse(planInput, data)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}

// fixable are the rules kiln fix repairs among psa's (their findings carry a fix).
func fixable(rule string) bool { _, ok := fixActions[rule]; return ok }

func TestPlanGolden(t *testing.T) {
	plan, err := NewPlanWith(readPlanInput(t), manifest.LatestKube, PlanOptions{Fixable: fixable})
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := plan.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/plan/plan.txt.golden", text.Bytes())
	golden.Check(t, "testdata/plan/plan.json.golden", js.Bytes())

	// The facts the goldens must show, asserted directly.
	want := map[string]struct{ level, version, next string }{
		"shop":   {"restricted", "v1.37", ""},           // can move to restricted
		"legacy": {"baseline", "v1.37", "restricted"},   // cannot: its workload passes baseline only
		"infra":  {"privileged", "v1.37", "baseline"},   // a hostNetwork workload
		"tools":  {"restricted", "v1.18", "restricted"}, // restricted only before seccomp joined it
	}
	if len(plan.Namespaces) != len(want) {
		t.Fatalf("%d namespaces, want %d", len(plan.Namespaces), len(want))
	}
	for _, ns := range plan.Namespaces {
		w := want[ns.Name]
		if ns.Level != w.level || ns.LevelVersion != w.version || ns.Next != w.next {
			t.Errorf("%s: %s %s next %q, want %s %s next %q", ns.Name, ns.Level, ns.LevelVersion, ns.Next, w.level, w.version, w.next)
		}
		if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != w.level {
			t.Errorf("%s: enforce label %q, want %q", ns.Name, got, w.level)
		}
		if last := ns.Steps[len(ns.Steps)-1]; (w.next != "") != (last.Mode == "audit+warn") {
			t.Errorf("%s: last step %q", ns.Name, last.Mode)
		}
	}
	// JSON is valid and round-trips.
	var back Plan
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Namespaces) != 4 {
		t.Errorf("JSON does not round-trip: %v", err)
	}
}

// TestPlanMatchesLint: a workload passes a level in the plan exactly when
// kiln lint, judging it at that level, reports no psa finding for it.
func TestPlanMatchesLint(t *testing.T) {
	objs := readPlanInput(t)
	plan, err := NewPlan(objs, manifest.LatestKube)
	if err != nil {
		t.Fatal(err)
	}
	// Without Namespace objects, lint judges every workload at --psa-level.
	var workloads []*manifest.Object
	for _, o := range objs {
		if o.Kind != "Namespace" {
			workloads = append(workloads, o)
		}
	}
	for _, level := range []string{"restricted", "baseline"} {
		opts := rules.DefaultOptions()
		opts.PSALevel, opts.PSAVersion = level, "v1.37"
		e := &rules.Engine{Checkers: []*rules.Checker{Checker}, Options: opts}
		res, err := e.Run(workloads, nil)
		if err != nil {
			t.Fatal(err)
		}
		failing := map[manifest.Ref]bool{}
		for _, f := range res.Active() {
			failing[f.Object] = true
		}
		for _, ns := range plan.Namespaces {
			for _, wp := range ns.Workloads {
				passes := rank(wp.Level) >= rank(level)
				if passes == failing[wp.Object] {
					t.Errorf("%s at %s: plan says level %s, lint findings: %v", wp.Object, level, wp.Level, failing[wp.Object])
				}
			}
		}
	}
}

func TestPlanEmpty(t *testing.T) {
	plan, err := NewPlan(nil, manifest.LatestKube)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plan.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "Pod Security plan for v1.37\n\nno namespaces and no workloads in the input\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestPlanFixAndGit: the plan says what kiln fix reaches (tools passes
// restricted only at v1.18, and what blocks v1.37 is all fixable), and
// points at the labels of Namespaces in the input instead of kubectl label.
func TestPlanFixAndGit(t *testing.T) {
	plan, err := NewPlanWith(readPlanInput(t), manifest.LatestKube, PlanOptions{Fixable: fixable})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, ns := range plan.Namespaces {
		switch ns.Name {
		case "tools":
			if ns.FixReaches != "restricted v1.37" {
				t.Errorf("tools: FixReaches %q, want restricted v1.37", ns.FixReaches)
			}
		case "infra":
			if ns.FixReaches != "" {
				t.Errorf("infra (hostNetwork, not fixable): FixReaches %q", ns.FixReaches)
			}
		}
		if (ns.Defined != nil) != (ns.LabelsAt != nil) {
			t.Errorf("%s: defined %v, labelsAt %v", ns.Name, ns.Defined, ns.LabelsAt)
		}
	}
	out := text.String()
	if !bytes.Contains(text.Bytes(), []byte("kiln fix: reaches restricted v1.37 (")) {
		t.Errorf("text does not say what kiln fix reaches:\n%s", out)
	}
	for _, ns := range plan.Namespaces {
		if ns.LabelsAt != nil && bytes.Contains(text.Bytes(), []byte("kubectl label --overwrite namespace "+ns.Name+" ")) {
			t.Errorf("%s is in the input but the plan says kubectl label", ns.Name)
		}
	}
}

// TestPlanUndeclared: for namespaces not in the input the plan says what
// kiln lint judges them with (the configuration's labels, privileged for a
// system namespace, the assumed level), and warns exactly where kiln lint,
// with the same options, reports errors.
func TestPlanUndeclared(t *testing.T) {
	const file = "testdata/plan/undeclared.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := manifest.Parse(file, data)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	opts := rules.DefaultOptions()
	opts.PSANamespaces = map[string]map[string]string{"monitoring": {"pod-security.kubernetes.io/enforce": "baseline"}}
	plan, err := NewPlanWith(objs, manifest.LatestKube, PlanOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ns         string
		configured bool
		assumed    string // the assumed enforce label
		lines      []string
	}{
		{"apps", false, "restricted", []string{
			"  assumed:  kiln lint judges it at pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/enforce-version=latest; declare the Namespace with pod-security.kubernetes.io labels, or set psa.namespaces.apps\n",
			"  warning:  at the assumed enforce=restricted, kiln lint reports the pods of 1 workload as rejected\n",
		}},
		{"kube-system", false, "privileged", []string{
			"  assumed:  privileged, as a cluster leaves kube-system unlabelled; set psa.namespaces.kube-system to judge it at a level\n",
		}},
		{"monitoring", true, "", []string{
			"  now:      pod-security.kubernetes.io/enforce=baseline (psa.namespaces.monitoring in the config)\n",
			"  warning:  enforce=baseline today rejects the pods of 1 workload\n",
		}},
	}
	if len(plan.Namespaces) != len(tests) {
		t.Fatalf("%d namespaces, want %d:\n%s", len(plan.Namespaces), len(tests), text.String())
	}
	for i, tt := range tests {
		ns := plan.Namespaces[i]
		if ns.Name != tt.ns || ns.Configured != tt.configured || ns.Assumed["pod-security.kubernetes.io/enforce"] != tt.assumed {
			t.Errorf("namespace %d: %s configured=%v assumed=%v, want %s configured=%v assumed enforce %q", i, ns.Name, ns.Configured, ns.Assumed, tt.ns, tt.configured, tt.assumed)
		}
		for _, l := range tt.lines {
			if !strings.Contains(text.String(), l) {
				t.Errorf("%s: the text lacks %q:\n%s", tt.ns, l, text.String())
			}
		}
	}
	// kiln lint with the same options: errors exactly in the namespaces the plan warns about.
	res, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}, Options: opts}).Run(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	linted := map[string]bool{}
	for _, f := range res.Active() {
		if f.Severity == rules.Error {
			linted[f.Object.Namespace] = true
		}
	}
	for _, block := range strings.Split(text.String(), "\nnamespace ")[1:] {
		name, _, _ := strings.Cut(block, " ")
		if warned := strings.Contains(block, "  warning:  "); warned != linted[name] {
			t.Errorf("%s: the plan warns %v, kiln lint reports errors %v", name, warned, linted[name])
		}
	}
}
