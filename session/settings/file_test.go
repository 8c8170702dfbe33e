package settings

import (
	"os"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// parse decodes a .kiln.yaml text alone, as Load does.
func parse(path string, data []byte) (*Settings, error) {
	as, err := ReadFile(path, data)
	if err != nil {
		return nil, err
	}
	s := New()
	s.File = path
	for _, a := range as {
		if err := s.apply(a); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// TestConfigErrorsAtTheirLine: each mistake in .kiln.yaml is an error at its
// line, naming the file.
func TestConfigErrorsAtTheirLine(t *testing.T) {
	known := []*rules.Rule{{ID: "psa/runAsNonRoot"}, {ID: "psa/privileged"}, {ID: "sidecar/restart-policy"}}
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
			c, err := parse(".kiln.yaml", []byte(tt.in))
			if err == nil {
				err = c.RuleConfig().CheckRules(known)
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
		if c, err := parse(".kiln.yaml", data); err == nil {
			_ = c.RuleConfig().CheckRules(nil)
			_ = c.Excluded("x/y.yaml")
		}
	})
}

func TestHelmChartSettings(t *testing.T) {
	c, err := parse("repo/.kiln.yaml", []byte("helm:\n  releaseName: shop\n  values: [ci.yaml]\n  set: [a=1]\n  charts:\n    charts/app: {namespace: prod, values: [charts/app/prod.yaml], set: [b=2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Chart("repo/charts/app")
	if got.ReleaseName != "shop" || got.Namespace != "prod" || strings.Join(got.ValueFiles, ",") != "repo/ci.yaml,repo/charts/app/prod.yaml" || strings.Join(got.Set, ",") != "a=1,b=2" {
		t.Errorf("chart settings = %+v", got)
	}
	if other := c.Chart("repo/charts/other"); other.Namespace != "" || len(other.ValueFiles) != 1 {
		t.Errorf("another chart got %+v", other)
	}
	// The entry an error tells the user to write: the chart's directory as
	// the config file sees it.
	for dir, want := range map[string]string{"repo/charts/app": "helm.charts.charts/app", "repo/charts/app/": "helm.charts.charts/app", "repo": "helm", "vendor/charts/db": `helm.charts["../vendor/charts/db"]`} {
		if got := c.Chart(dir).Setting; got != want {
			t.Errorf("Chart(%q).Setting = %q, want %q", dir, got, want)
		}
	}
	if _, err := parse(".kiln.yaml", []byte("helm:\n  valuez: [x]\n")); err == nil || !strings.HasPrefix(err.Error(), ".kiln.yaml:2:3: unknown key helm.valuez") {
		t.Errorf("error = %v", err)
	}
}

func TestReadFile(t *testing.T) {
	good := `kubeVersion: "1.30"
psa: {level: baseline, version: v1.29}
rules:
  psa/runAsNonRoot: warning
  "sidecar/*": off
exclude: [vendor/**, "charts/*/tests"]
policies: [policies/]
storageClasses: cluster/sc.yaml
`
	c, err := parse("k.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.KubeVersion != "1.30" || c.PSALevel != "baseline" || c.PSAVersion != "v1.29" || c.StorageClasses != "cluster/sc.yaml" ||
		len(c.Policies) != 1 || c.Rules["sidecar/*"] != "off" {
		t.Errorf("config = %+v", c)
	}
	if !c.RuleConfig().Enabled("psa/runAsNonRoot") || c.RuleConfig().Enabled("sidecar/classic-in-job") {
		t.Error("Enabled is wrong")
	}
	bad := []struct{ in, want string }{
		{"kubernetes: 1.30\n", "k.yaml:1:1: unknown config key \"kubernetes\""},
		{"kubeVersion: banana\n", "k.yaml:1:14: kubeVersion: invalid Kubernetes version"},
		{"psa: {level: strict}\n", "k.yaml:1:14: psa.level: \"strict\" is not a Pod Security level"},
		{"psa: {mode: x}\n", "unknown key psa.mode"},
		{"rules:\n  psa/x: loud\n", "k.yaml:2:10: rules.psa/x: \"loud\" is not a setting"},
		{"exclude: vendor\n", "k.yaml:1:10: exclude must be a list of strings"},
		{"- a\n", "config must be a mapping"},
		{"a: [\n", "k.yaml:1:1: invalid YAML in config"},
	}
	for _, tt := range bad {
		_, err := parse("k.yaml", []byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func FuzzReadFile(f *testing.F) {
	f.Add([]byte("rules: {a: off}\nexclude: [x]\npsa: {level: baseline}\n"))
	f.Add([]byte("kubeVersion: 1.2\n"))
	f.Add([]byte("[]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parse("f.yaml", data)
		if err == nil {
			_ = c.Excluded("a/b.yaml")
			_ = c.RuleConfig().Enabled("psa/x")
		}
	})
}

// TestDocsExample: the .kiln.yaml docs/configuration.md shows is one kiln
// reads, with every key it documents.
func TestDocsExample(t *testing.T) {
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "```yaml\nkubeVersion: \"1.31\""
	text := string(data)
	i := strings.Index(text, start)
	if i < 0 {
		t.Fatal("docs/configuration.md has no .kiln.yaml example")
	}
	body := text[i+len("```yaml\n"):]
	body = body[:strings.Index(body, "```")]
	s, err := parse("docs/configuration.md", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RuleConfig().CheckRules(checkers.Rules()); err != nil {
		t.Fatal(err)
	}
	if s.KubeVersion == "" || s.PSALevel == "" || len(s.PSANamespaces) == 0 || s.FailOn == "" || len(s.AsGroups) == 0 || len(s.Helm.Charts) == 0 || len(s.Exclude) == 0 {
		t.Errorf("docs/configuration.md's example lost keys: %+v", s)
	}
}

// TestFluxSources: flux.sources maps sources to folders relative to the
// config file; a key that names no source is an error at its line.
func TestFluxSources(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{"kind and short keys", "flux:\n  sources:\n    GitRepository/flux-system/flux-system: .\n    apps/dev-team: ../dev-team\n",
			map[string]string{"GitRepository/flux-system/flux-system": "repo", "apps/dev-team": "dev-team"}, ""},
		{"not a source", "flux:\n  sources:\n    flux-system: .\n", nil, `repo/.kiln.yaml:3:5: flux.sources: "flux-system" is not a source`},
		{"not a folder", "flux:\n  sources:\n    a/b: [x]\n", nil, `repo/.kiln.yaml:3:10: flux.sources.a/b must be a folder`},
		{"unknown flux key", "flux:\n  source: {}\n", nil, `repo/.kiln.yaml:2:3: unknown key flux.source; did you mean "sources"? (known: sources)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse("repo/.kiln.yaml", []byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error = %v, want prefix %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.FluxSources) != len(tt.want) {
				t.Fatalf("FluxSources = %v, want %v", s.FluxSources, tt.want)
			}
			for k, v := range tt.want {
				if s.FluxSources[k] != v {
					t.Errorf("FluxSources[%s] = %q, want %q", k, s.FluxSources[k], v)
				}
			}
		})
	}
}

// TestEveryMistake: a .kiln.yaml with several mistakes reports them all at
// once, each at its line, with a "did you mean" where a key is near a known one.
func TestEveryMistake(t *testing.T) {
	_, err := parse(".kiln.yaml", []byte("kubeVersoin: 1.30\nhelm:\n  valuez: [x]\nfrobnicate: 1\n"))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`.kiln.yaml:1:1: unknown config key "kubeVersoin"; did you mean "kubeVersion"?`,
		`.kiln.yaml:3:3: unknown key helm.valuez; did you mean "values"?`,
		`.kiln.yaml:4:1: unknown config key "frobnicate" (known:`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q:\n%v", w, err)
		}
	}
}
