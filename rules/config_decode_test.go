package rules

import (
	"strings"
	"testing"
)

// TestConfigErrorsAtTheirLine: each mistake in .kiln.yaml is an error at its
// line, naming the file.
func TestConfigErrorsAtTheirLine(t *testing.T) {
	known := []*Rule{{ID: "psa/runAsNonRoot"}, {ID: "psa/privileged"}, {ID: "sidecar/restart-policy"}}
	tests := []struct {
		name, in, want string
	}{
		{"misspelled rule", "rules:\n  psa/runAsNonRot: off\n", `.kiln.yaml:2:3: rules: unknown rule "psa/runAsNonRot"; did you mean "psa/runAsNonRoot"?`},
		{"unknown family", "rules:\n  psx/*: off\n", `.kiln.yaml:2:3: rules: unknown rule family "psx"`},
		{"duplicate key", "kubeVersion: \"1.30\"\npsa: {level: baseline}\nkubeVersion: \"1.31\"\n", `.kiln.yaml:3:1: duplicate key "kubeVersion" (first at line 1)`},
		{"duplicate rule", "rules:\n  psa/privileged: off\n  psa/privileged: error\n", `.kiln.yaml:3:3: duplicate key "psa/privileged"`},
		{"bad glob", "exclude:\n  - vendor/**\n  - \"charts/[a\"\n", `.kiln.yaml:3:5: exclude "charts/[a" is not a glob`},
		{"second document", "kubeVersion: \"1.30\"\n---\nrules: {}\n", `.kiln.yaml:3:1: a second YAML document in the config`},
		{"known rules, patterns and policies pass", "rules:\n  psa/privileged: warning\n  \"sidecar/*\": off\n  policy/my-own: off\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig(".kiln.yaml", []byte(tt.in))
			if err == nil {
				err = c.CheckRules(known)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

func FuzzConfigCheckRules(f *testing.F) {
	f.Add([]byte("rules:\n  psa/*: off\nexclude: [a/**]\n"))
	f.Add([]byte("a: 1\n---\nb: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if c, err := ParseConfig(".kiln.yaml", data); err == nil {
			_ = c.CheckRules(nil)
			_ = c.Excluded("x/y.yaml")
		}
	})
}

func TestHelmChartSettings(t *testing.T) {
	c, err := ParseConfig("repo/.kiln.yaml", []byte("helm:\n  releaseName: shop\n  values: [ci.yaml]\n  set: [a=1]\n  charts:\n    charts/app: {namespace: prod, values: [charts/app/prod.yaml], set: [b=2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := c.ChartSettings("repo/charts/app")
	if got.ReleaseName != "shop" || got.Namespace != "prod" || strings.Join(got.Values, ",") != "repo/ci.yaml,repo/charts/app/prod.yaml" || strings.Join(got.Set, ",") != "a=1,b=2" {
		t.Errorf("chart settings = %+v", got)
	}
	if other := c.ChartSettings("repo/charts/other"); other.Namespace != "" || len(other.Values) != 1 {
		t.Errorf("another chart got %+v", other)
	}
	if _, err := ParseConfig(".kiln.yaml", []byte("helm:\n  valuez: [x]\n")); err == nil || !strings.HasPrefix(err.Error(), ".kiln.yaml:2:3: unknown key helm.valuez") {
		t.Errorf("error = %v", err)
	}
}
