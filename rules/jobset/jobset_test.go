package jobset

import (
	"strings"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/rules/internal/podutil"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
	"github.com/kilnhq/kiln/rules/policies"
)

// checker runs every jobset rule: torchrun-nnodes and rwo-claim-policy (Go, Checker) and the
// others, policies in rules/policies.
var checker = ruletest.Combine("jobset", Checker, policies.NewChecker("jobset-policies", func(id string) bool { return strings.HasPrefix(id, "jobset/") }))

func TestFixtures(t *testing.T) {
	if len(checker.Rules) <= len(Checker.Rules) {
		t.Error("no policy implements a jobset rule")
	}
	ruletest.CheckFixtures(t, checker)
}

func TestRuleDocs(t *testing.T) { ruletest.CheckRules(t, checker) }

func TestParseNodes(t *testing.T) {
	for _, tc := range []struct {
		in       string
		min, max int64
		ok       bool
	}{
		{"8", 8, 8, true}, {" 8 ", 8, 8, true}, {"2:8", 2, 8, true}, {"4:4", 4, 4, true},
		{"0", 0, 0, false}, {"-1", 0, 0, false}, {"8:2", 0, 0, false}, {"2:", 0, 0, false},
		{"$(N)", 0, 0, false}, {"auto", 0, 0, false}, {"", 0, 0, false}, {"1:2:3", 0, 0, false},
	} {
		n, ok := parseNodes(tc.in)
		if ok != tc.ok || (ok && (n.min != tc.min || n.max != tc.max)) {
			t.Errorf("parseNodes(%q) = %v, %v; want %d:%d, %v", tc.in, n, ok, tc.min, tc.max, tc.ok)
		}
	}
}

func TestLaunchFlags(t *testing.T) {
	c := podutil.Container{Path: "c", M: map[string]any{
		"command": []any{"bash", "-c", "torchrun --nnodes=$(N) --nproc-per-node 4 x.py"},
		"args":    []any{"--nnodes", "16", "--nproc_per_node"},
		"env":     []any{map[string]any{"name": "N", "value": "2"}, map[string]any{"name": "PET_NNODES", "value": int64(3)}},
	}}
	nnodes, nproc := launchFlags(c)
	var got []string
	for _, v := range append(nnodes, nproc...) {
		got = append(got, v.field+" "+v.text+" "+v.value)
	}
	want := []string{
		"c.env[1].value PET_NNODES=3 3",
		"c.command[2] --nnodes=$(N) (= 2) 2",
		"c.args[1] --nnodes 16 16",
		"c.command[2] --nproc-per-node 4 4",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("launchFlags:\n got %q\nwant %q", got, want)
	}
}

func FuzzLaunchFlags(f *testing.F) {
	f.Add("torchrun --nnodes=8 --nproc_per_node 4", "--nnodes", "2:8")
	f.Add("--nnodes", "", "$(X)")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		m := map[string]any{
			"command": []any{a, b},
			"args":    []any{c, a},
			"env":     []any{map[string]any{"name": "X", "value": b}, map[string]any{"name": "PET_NNODES", "value": c}},
		}
		nnodes, nproc := launchFlags(podutil.Container{Path: "c", M: m})
		for _, v := range append(nnodes, nproc...) {
			if v.field == "" || v.text == "" {
				t.Fatalf("empty launch value %+v", v)
			}
		}
		parseNodes(a)
	})
}
